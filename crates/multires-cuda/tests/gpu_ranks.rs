//! The coding of one MPI rank's slab on a GPU (`code_slab` from host
//! memory, `code_slab_resident` from device memory): each brick's payload
//! and CRC equal the CPU's for the same slab, which are the whole field's
//! payloads for those bricks. Skipped without a GPU, failed under
//! MULTIRES_REQUIRE_GPU=1.

mod gpu_common;
use gpu_common::*;

#[test]
fn a_slab_coded_on_the_gpu_gives_the_whole_fields_payloads() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{code_bricks, container, plan_range, scan};
    use multires::codec::{
        CodecOptions, ErrorBound, FieldView, Lifting, Values, ValuesRef, Volume,
    };
    use multires_cuda::codec::{code_slab, code_slab_resident, finite_range, DeviceField};
    let Some(gpu) = gpu_or_skip("a_slab_coded_on_the_gpu_gives_the_whole_fields_payloads") else {
        return;
    };
    let n = 48;
    let field = make(FieldKind::Turbulent, n, true, 5);
    let plane = n * n;
    for (t, bound, brick) in [
        (Lifting::Interp, ErrorBound::Rel(1e-3), [16, 16, 16]),
        (Lifting::Interp, ErrorBound::Abs(0.0), [8, 24, 48]),
        (Lifting::Cdf97, ErrorBound::Rel(1e-2), [16, 16, 16]),
    ] {
        let mut o = CodecOptions::new(t, bound);
        o.brick = Some(brick);
        let (lo, hi, _) = scan(&field);
        let (range, e, grid) = plan_range((lo, hi), [n, n, n], &o).unwrap();
        let whole = code_bricks(
            FieldView::of(&[n, n, n], ValuesRef::F32(&field)).unwrap(),
            &o,
            e,
            grid.brick,
            &|_| {},
        )
        .unwrap();
        // The slab: whole brick layers from the second to plane 32.
        let (z0, z1) = (brick[0], brick[0] * (1 + 24 / brick[0]));
        let part = field[z0 * plane..z1 * plane].to_vec();
        let shape = [z1 - z0, n, n];
        let per_layer = grid.counts()[1] * grid.counts()[2];
        let want = &whole[z0 / brick[0] * per_layer..z1 / brick[0] * per_layer];
        let host = code_slab(
            &Volume::of(&shape, Values::F32(part.clone())).unwrap(),
            &o,
            (range, e, brick),
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        let dev = DeviceField::upload(&gpu, &shape, &part).unwrap();
        let (dlo, dhi) = finite_range(&dev, &gpu).unwrap();
        let (plo, phi, _) = scan(&part);
        assert_eq!((dlo, dhi), (plo, phi), "the slab's range on the device");
        let resident = code_slab_resident(&dev, &o, (range, e, brick), &gpu, &|_| {}).unwrap();
        for (name, got) in [("host", &host), ("resident", &resident)] {
            assert_eq!(got.len(), want.len(), "{t} {bound} {name}: bricks");
            for (k, (g, w)) in got.iter().zip(want).enumerate() {
                assert!(
                    g.0.as_ref() == w.0.as_slice(),
                    "{t} {bound} {name}: brick {k} of the slab differs from the field's"
                );
                assert_eq!(g.0.crc(), container::crc32(&w.0), "{t} {bound} {name}: CRC");
                assert_eq!(
                    (g.1, g.3),
                    (w.1, w.3),
                    "{t} {bound} {name}: error, outliers"
                );
            }
        }
    }
    // A NaN in a slab from host memory is refused, with its index.
    let mut bad = field[..16 * plane].to_vec();
    bad[77] = f32::NAN;
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(1e-3));
    let err = code_slab(
        &Volume::of(&[16, n, n], Values::F32(bad)).unwrap(),
        &o,
        ((0.0, 1.0), 1e-3, [16, 16, 16]),
        std::slice::from_ref(&gpu),
        &|_| {},
    )
    .err()
    .expect("a NaN slab is refused");
    assert!(err.to_string().contains("value 77 is NaN"), "{err}");
}
