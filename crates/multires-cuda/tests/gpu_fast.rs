//! The fast profile (`--profile fast`, transform lorenzo) on the GPU: the
//! file's bytes equal the CPU coder's from device, page-locked and host
//! memory, and the decoded values equal the CPU decoder's bit for bit
//! (device, page-locked and host outputs), with the bound held on every
//! finite value and NaN kept. Without a GPU these tests print a notice
//! and pass, unless MULTIRES_REQUIRE_GPU=1.

mod gpu_common;
use gpu_common::*;

#[test]
fn fast_profile_on_the_gpu_equals_the_cpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::MrzReader;
    use multires::codec::{compress, decompress, CodecOptions, DType, ErrorBound, Lifting, Volume};
    use multires_cuda::codec::{compress_pinned, compress_resident, decompress_pinned};
    use multires_cuda::codec::{decompress_resident, DeviceField, PinnedBytes, PinnedField};
    let Some(gpu) = gpu_or_skip("fast_profile_on_the_gpu_equals_the_cpu") else {
        return;
    };
    let f3 = make(FieldKind::Turbulent, 40, true, 11);
    let mut masked = make(FieldKind::Smooth, 40, true, 5);
    masked[1600..3200].iter_mut().for_each(|v| *v = f32::NAN);
    masked[7] = f32::INFINITY;
    masked[20_000] = 3e9;
    let f2 = make(FieldKind::Smooth, 90, false, 3);
    let cases: [(Vec<usize>, Vec<f32>, [usize; 3]); 4] = [
        (vec![40, 40, 40], f3.clone(), [16, 16, 16]),
        (vec![40, 40, 40], f3, [17, 33, 17]),
        (vec![40, 40, 40], masked, [16, 16, 16]),
        (vec![90, 90], f2, [1, 32, 32]),
    ];
    for (shape, values, brick) in &cases {
        let v = Volume::new(
            shape,
            values.iter().map(|&x| x as f64).collect(),
            DType::F32,
        )
        .unwrap();
        let field = DeviceField::upload(&gpu, shape, values).unwrap();
        let pinned = PinnedField::from_values(&gpu, shape, values).unwrap();
        let mut pinned_out = PinnedField::zeros(&gpu, shape).unwrap();
        let finite: Vec<f64> = values
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| v as f64)
            .collect();
        let span = finite.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v))
            - finite.iter().fold(f64::INFINITY, |m, &v| m.min(v));
        // Rel 0.1 and 1e-2: many blocks of 0-3 magnitude planes (the
        // kernels' bit-by-bit paths).
        for bound in [
            ErrorBound::Rel(0.1),
            ErrorBound::Rel(1e-2),
            ErrorBound::Rel(1e-4),
            ErrorBound::Abs(2e-3),
            ErrorBound::Abs(0.0),
        ] {
            let at = format!("{bound} {shape:?} bricks {brick:?}");
            let mut o = CodecOptions::new(Lifting::Lorenzo, bound);
            o.brick = Some(*brick);
            let (cpu, cs) = compress(&v, &o, &|_| {}).unwrap();
            let (dev, ds, run) = compress_resident(&field, &o, &gpu, &|_| {}).unwrap();
            let dev = dev.to_vec();
            assert!(
                cpu == dev,
                "{at}: resident {} bytes, CPU {} bytes, first difference at {:?}",
                dev.len(),
                cpu.len(),
                cpu.iter().zip(&dev).position(|(a, b)| a != b)
            );
            assert_eq!(
                (ds.max_error, ds.outliers),
                (cs.max_error, cs.outliers),
                "{at}"
            );
            assert!(run.code_s > 0.0);
            let (pin, _, _) =
                compress_pinned(&pinned, &o, std::slice::from_ref(&gpu), &|_| {}).unwrap();
            assert!(pin.to_vec() == cpu, "{at}: page-locked field");
            let (host, _, _) =
                multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
                    .unwrap();
            assert!(host.to_vec() == cpu, "{at}: host field");
            // Decoded: the CPU decoder's values, bit for bit, on every path.
            let want: Vec<u32> = match decompress(&mut in_memory(&cpu), None, &|_| {})
                .unwrap()
                .data
            {
                multires::codec::Values::F32(d) => d.iter().map(|x| x.to_bits()).collect(),
                _ => panic!("float32"),
            };
            let bits = |d: &[f32]| d.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            let back = decompress_resident(&mut in_memory(&cpu), &gpu, &|_| {}).unwrap();
            assert_eq!(back.info.shape(), *shape);
            assert!(
                bits(&back.download(&gpu).unwrap()) == want,
                "{at}: resident decode"
            );
            decompress_pinned(
                &mut in_memory(&cpu),
                &mut pinned_out,
                std::slice::from_ref(&gpu),
                &|_| {},
            )
            .unwrap();
            assert!(
                bits(pinned_out.as_slice()) == want,
                "{at}: page-locked decode"
            );
            let h = multires_cuda::codec::decompress(
                &mut in_memory(&cpu),
                None,
                std::slice::from_ref(&gpu),
                &|_| {},
            )
            .unwrap();
            match &h.data {
                multires::codec::Values::F32(d) => assert!(bits(d) == want, "{at}: host decode"),
                _ => panic!("{at}: float32 expected"),
            }
            // The file in page-locked memory: its payloads go up from where
            // they lie and their checksums are taken on the GPU.
            let locked = PinnedBytes::copy_of(&gpu, &cpu).unwrap().shared();
            let back = decompress_resident(
                &mut MrzReader::from_shared(locked, "t").unwrap(),
                &gpu,
                &|_| {},
            )
            .unwrap();
            assert!(
                bits(&back.download(&gpu).unwrap()) == want,
                "{at}: decode from page-locked memory"
            );
            // The bound on every finite value; NaN and infinities kept.
            let e = match bound {
                ErrorBound::Rel(r) => r * span,
                ErrorBound::Abs(a) => a,
                _ => unreachable!(),
            };
            for (x, &b) in values.iter().zip(&want) {
                let y = f32::from_bits(b);
                if x.is_finite() {
                    assert!(
                        (*x as f64 - y as f64).abs() <= e,
                        "{at}: {x} decoded as {y}"
                    );
                } else {
                    assert!(
                        x.to_bits() == b || (x.is_nan() && y.is_nan()),
                        "{at}: {x} decoded as {y}"
                    );
                }
            }
        }
    }
}

/// A damaged payload is refused by the GPU decoder, naming the brick, both
/// from a file in page-locked memory (checksums on the GPU) and from one
/// read through a reader (checksums on the host).
#[test]
fn fast_profile_damaged_payload_is_refused_on_the_gpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, CodecOptions, DType, ErrorBound, Lifting, MrzReader, Volume};
    use multires_cuda::codec::{decompress_resident, PinnedBytes};
    let Some(gpu) = gpu_or_skip("fast_profile_damaged_payload_is_refused_on_the_gpu") else {
        return;
    };
    let values = make(FieldKind::Turbulent, 40, true, 2);
    let v = Volume::new(
        &[40, 40, 40],
        values.iter().map(|&x| x as f64).collect(),
        DType::F32,
    )
    .unwrap();
    let mut o = CodecOptions::new(Lifting::Lorenzo, ErrorBound::Rel(1e-3));
    o.brick = Some([16, 16, 16]);
    let (mut bytes, _) = compress(&v, &o, &|_| {}).unwrap();
    // The middle of the file lies in a payload (27 bricks of ~6 KB).
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    let locked = PinnedBytes::copy_of(&gpu, &bytes).unwrap().shared();
    let err = decompress_resident(
        &mut MrzReader::from_shared(locked, "damaged").unwrap(),
        &gpu,
        &|_| {},
    )
    .err()
    .expect("a damaged payload from page-locked memory decoded");
    assert!(err.to_string().contains("brick"), "{err}");
    let err = decompress_resident(&mut in_memory(&bytes), &gpu, &|_| {})
        .err()
        .expect("a damaged payload through a reader decoded");
    assert!(err.to_string().contains("brick"), "{err}");
}
