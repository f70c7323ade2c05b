//! Host-side preparation of the overlap-save filters: each filter's
//! correlation spectrum, computed in float64 and pruned to the circular band
//! of bins that matter, and the FFT twiddle table.

use num_complex::Complex64;
use rustfft::FftPlanner;

/// H[k] for k in the circular range [lo, lo + values.len()) mod L; zero elsewhere.
#[derive(Debug, Clone)]
pub struct Band {
    pub lo: usize,
    pub values: Vec<Complex64>,
}

/// The multiplier that turns segment spectra into r[u] = sum_i seg[u + i] g[i]
/// (circular, length l) after an unnormalized inverse FFT:
/// H = conj(DFT(conj g)) / l. `conj_g` holds conj(g[i]) for i = 0.. (at most l).
/// Bins below `rel_floor` times the peak are dropped: they lie far below the
/// rounding of the inverse FFT in the working precision.
pub fn correlation_band(
    conj_g: &[Complex64],
    l: usize,
    rel_floor: f64,
    planner: &mut FftPlanner<f64>,
) -> Band {
    let mut buf = vec![Complex64::new(0.0, 0.0); l];
    buf[..conj_g.len()].copy_from_slice(conj_g);
    planner.plan_fft_forward(l).process(&mut buf);
    let scale = 1.0 / l as f64;
    for v in buf.iter_mut() {
        *v = v.conj() * scale;
    }
    let peak = buf.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let keep: Vec<bool> = buf.iter().map(|v| v.norm() > peak * rel_floor).collect();
    // The band is the complement of the longest circular run of dropped bins.
    let (mut best_len, mut best_start) = (0usize, 0usize);
    if let Some(first_keep) = keep.iter().position(|&k| k) {
        let mut run = 0usize;
        for step in 1..=l {
            let i = (first_keep + step) % l;
            if keep[i] {
                if run > best_len {
                    best_len = run;
                    best_start = (i + l - run) % l;
                }
                run = 0;
            } else {
                run += 1;
            }
        }
    } else {
        return Band {
            lo: 0,
            values: vec![Complex64::new(0.0, 0.0); 1],
        };
    }
    let lo = (best_start + best_len) % l;
    let len = l - best_len;
    let values = (0..len).map(|b| buf[(lo + b) % l]).collect();
    Band { lo, values }
}

/// exp(-2 pi i k / l) for k < l / 2, as interleaved (re, im).
pub fn twiddles(l: usize) -> Vec<f64> {
    let mut t = Vec::with_capacity(l);
    for k in 0..l / 2 {
        let (s, c) = (-2.0 * std::f64::consts::PI * k as f64 / l as f64).sin_cos();
        t.push(c);
        t.push(s);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_reproduces_the_circular_correlation() {
        let l = 64;
        let g: Vec<Complex64> = (0..9)
            .map(|i| Complex64::new((i as f64 * 0.7).sin(), (i as f64 * 0.3).cos()))
            .collect();
        let seg: Vec<Complex64> = (0..l)
            .map(|i| Complex64::new((i as f64 * 1.3).cos(), (i as f64 * 0.2).sin()))
            .collect();
        let mut planner = FftPlanner::new();
        let conj_g: Vec<Complex64> = g.iter().map(|v| v.conj()).collect();
        let band = correlation_band(&conj_g, l, 0.0, &mut planner);
        assert_eq!(band.values.len(), l);
        let mut a = seg.clone();
        planner.plan_fft_forward(l).process(&mut a);
        let mut b = vec![Complex64::new(0.0, 0.0); l];
        for (j, v) in band.values.iter().enumerate() {
            let k = (band.lo + j) % l;
            b[k] = a[k] * v;
        }
        planner.plan_fft_inverse(l).process(&mut b);
        for u in 0..l - g.len() {
            let want: Complex64 = (0..g.len()).map(|i| seg[u + i] * g[i]).sum();
            assert!((b[u] - want).norm() < 1e-12, "u {u}: {} vs {want}", b[u]);
        }
    }

    #[test]
    fn wide_bands_are_stored_whole_in_bit_reversed_order() {
        let l = 16;
        let values: Vec<Complex64> = (0..l)
            .map(|k| Complex64::new(k as f64, -(k as f64)))
            .collect();
        let mut packed = PackedBands::default();
        packed.push(
            &Band {
                lo: 3,
                values: values[..12].to_vec(),
            },
            l,
            |v| v,
            0.0,
        );
        packed.push(
            &Band {
                lo: 5,
                values: values[..2].to_vec(),
            },
            l,
            |v| v,
            0.0,
        );
        assert_eq!(packed.len, vec![-16, 2]);
        // Bin k = 3 + b holds value b; slot brev4(k).
        for b in 0..12 {
            let k = (3 + b) % l;
            let p = (k as u32).reverse_bits() >> 28;
            assert_eq!(packed.values[2 * p as usize], b as f64, "bin {k}");
        }
        // Bins outside the band are zero: k = 15 -> slot brev(15) = 15.
        assert_eq!(packed.values[2 * 15], 0.0);
        assert_eq!(packed.offsets, vec![0, 16]);
        assert_eq!(packed.lo[1], 5);
    }

    #[test]
    fn narrow_band_is_pruned_to_a_wrapping_range() {
        // A slowly varying filter: its spectrum sits around bin 0 and wraps.
        let l = 256;
        let conj_g: Vec<Complex64> = (0..64)
            .map(|i| {
                let t = (i as f64 - 31.5) / 10.0;
                Complex64::new((-t * t).exp(), 0.0)
            })
            .collect();
        let band = correlation_band(&conj_g, l, 1e-3, &mut FftPlanner::new());
        assert!(band.values.len() < l / 2, "{}", band.values.len());
        assert!(
            band.lo > l / 2,
            "the band starts at a negative frequency: {}",
            band.lo
        );
    }
}

/// Packed spectra for the shared-memory overlap-save kernel: per filter an
/// offset, the band's first bin and its length; a band wider than a quarter
/// of the segment is stored whole in bit-reversed order (length -L), so the
/// kernel's product runs over consecutive shared-memory slots.
#[derive(Debug, Default)]
pub struct PackedBands<T> {
    pub values: Vec<T>,
    pub offsets: Vec<i64>,
    pub lo: Vec<i32>,
    pub len: Vec<i32>,
}

impl<T: Copy> PackedBands<T> {
    pub fn push(&mut self, band: &Band, l: usize, of: impl Fn(f64) -> T, zero: T) {
        self.offsets.push((self.values.len() / 2) as i64);
        if band.values.len() > l / 4 {
            let bits = l.trailing_zeros();
            let start = self.values.len();
            self.values.resize(start + 2 * l, zero);
            for (b, c) in band.values.iter().enumerate() {
                let k = (band.lo + b) % l;
                let p = if bits == 0 {
                    0
                } else {
                    k.reverse_bits() >> (usize::BITS - bits)
                };
                self.values[start + 2 * p] = of(c.re);
                self.values[start + 2 * p + 1] = of(c.im);
            }
            self.lo.push(0);
            self.len.push(-(l as i32));
        } else {
            self.lo.push(band.lo as i32);
            self.len.push(band.values.len() as i32);
            for c in &band.values {
                self.values.push(of(c.re));
                self.values.push(of(c.im));
            }
        }
    }
}
