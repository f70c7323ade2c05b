//! Direct convolution for short filters: y[j] = Σ_k h[k] x[j - k].
use num_complex::Complex64;

/// Full-convolution outputs start..start + out.len().
pub fn convolve_range(x: &[Complex64], h: &[Complex64], start: usize, out: &mut [Complex64]) {
    let n = x.len() as i64;
    for (o, j) in out.iter_mut().zip(start..) {
        let j = j as i64;
        let k_lo = (j - n + 1).max(0) as usize;
        let k_hi = (j as usize).min(h.len() - 1);
        let mut acc = Complex64::new(0.0, 0.0);
        if k_lo <= k_hi {
            for k in k_lo..=k_hi {
                acc += h[k] * x[j as usize - k];
            }
        }
        *o = acc;
    }
}
