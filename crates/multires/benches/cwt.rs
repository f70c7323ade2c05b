//! Criterion benchmarks for DESIGN.md's CPU CWT configurations cwt-seed and
//! cwt-1m (plan made once; execute timed).
use criterion::{criterion_group, criterion_main, Criterion};
use multires::cwt::{OutputKind, Precision};
use multires::{CwtOptions, CwtPlan, ScaleSpec, Signal, Wavelet};

fn config(n: usize, wavelet: &str, spec: ScaleSpec) -> (CwtPlan, Signal) {
    let w = Wavelet::from_name(wavelet).expect("wavelet");
    let scales = spec.scales(&w).expect("scales");
    let mut o = CwtOptions::new(w, scales);
    o.precision = Precision::F32;
    o.output = OutputKind::Complex;
    let plan = CwtPlan::new(o, n, false).expect("plan");
    (plan, Signal::real(multires::signal::doppler(n)))
}

fn cwt_seed(c: &mut Criterion) {
    let mut g = c.benchmark_group("cwt-seed");
    g.sample_size(10);
    for w in ["morl", "cmor1.5-1.0"] {
        let (plan, x) = config(
            102_400,
            w,
            ScaleSpec::parse_linear("1:200").expect("scales"),
        );
        g.bench_function(format!("{w} f32 complex, N=102400, 200 scales"), |b| {
            b.iter(|| plan.execute(&x, None).expect("execute"))
        });
    }
    g.finish();
}

fn cwt_1m(c: &mut Criterion) {
    let mut g = c.benchmark_group("cwt-1m");
    g.sample_size(10);
    let (plan, x) = config(
        1 << 20,
        "cmor1.5-1.0",
        ScaleSpec::parse_log("1:1024:256").expect("scales"),
    );
    g.bench_function("cmor1.5-1.0 f32 complex, N=2^20, 256 log scales", |b| {
        b.iter(|| plan.execute(&x, None).expect("execute"))
    });
    g.finish();
}

criterion_group!(benches, cwt_seed, cwt_1m);
criterion_main!(benches);
