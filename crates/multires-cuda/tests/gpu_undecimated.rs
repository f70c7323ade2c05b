//! The GPU's stationary transform and MODWT equal the CPU's bit for bit in
//! float64 and within 1e-6 in float32, for several wavelets, lengths,
//! start levels and a memory limit that makes the batch run in blocks.
mod gpu_common;

use gpu_common::gpu_or_skip;
use multires::dwt::{modwt, swt, DiscreteWavelet};
use multires_cuda::undecimated as gpu;

fn rows(count: usize, n: usize) -> Vec<f64> {
    (0..count * n)
        .map(|i| ((i * 7919) % 1009) as f64 / 97.0 - 5.0 + (i as f64 * 0.013).sin())
        .collect()
}

fn same_bits(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.to_bits(), y.to_bits(), "{what}: element {i}: {x} vs {y}");
    }
}

#[test]
fn swt_equals_the_cpu_bit_for_bit() {
    let Some(g) = gpu_or_skip("swt") else { return };
    for (name, n, levels, start, norm) in [
        ("db4", 256, 4, 0, false),
        ("sym5", 96, 2, 1, true),
        ("bior2.2", 64, 6, 0, false),
    ] {
        let w = DiscreteWavelet::from_name(name).unwrap();
        let x = rows(5, n);
        let cpu = swt::swt(&x, n, &w, levels, start, norm).unwrap();
        // A limit of three rows' arrays: the batch goes a row at a time.
        for limit in [None, Some(3 * n * 8)] {
            let dev = gpu::swt(&g, &x, n, &w, levels, start, norm, limit).unwrap();
            for (j, ((ca, cd), (ga, gd))) in cpu.iter().zip(&dev).enumerate() {
                same_bits(ga, ca, &format!("{name} cA level {j}"));
                same_bits(gd, cd, &format!("{name} cD level {j}"));
            }
        }
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let dev = gpu::swt(&g, &x32, n, &w, levels, start, norm, None).unwrap();
        for ((ca, _), (ga, _)) in cpu.iter().zip(&dev) {
            for (a, b) in ca.iter().zip(ga) {
                assert!(
                    (a - *b as f64).abs() < 1e-6 * a.abs().max(1.0) * 10.0,
                    "{name} f32: {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn modwt_inverse_and_mra_equal_the_cpu_bit_for_bit() {
    let Some(g) = gpu_or_skip("modwt") else {
        return;
    };
    for (name, n, levels) in [
        ("db2", 1000, 6),
        ("sym4", 37, 5),
        ("coif3", 20, 4),
        ("haar", 1 << 14, 10),
    ] {
        let w = DiscreteWavelet::from_name(name).unwrap();
        let x = rows(3, n);
        let cpu = modwt::modwt(&x, n, &w, levels).unwrap();
        for limit in [None, Some(4 * n * 8)] {
            let dev = gpu::modwt(&g, &x, n, &w, levels, limit).unwrap();
            for (j, (c, d)) in cpu.iter().zip(&dev).enumerate() {
                same_bits(d, c, &format!("{name} modwt plane {j}"));
            }
            same_bits(
                &gpu::imodwt(&g, &cpu, n, &w, limit).unwrap(),
                &modwt::imodwt(&cpu, n, &w).unwrap(),
                &format!("{name} imodwt"),
            );
            let mra = modwt::modwtmra(&cpu, n, &w).unwrap();
            for (j, (c, d)) in mra
                .iter()
                .zip(&gpu::modwtmra(&g, &cpu, n, &w, limit).unwrap())
                .enumerate()
            {
                same_bits(d, c, &format!("{name} modwtmra plane {j}"));
            }
        }
    }
    let b = DiscreteWavelet::from_name("bior2.2").unwrap();
    assert!(gpu::modwt(&g, &rows(1, 16), 16, &b, 2, None).is_err());
}
