//! Direct evaluation of W[n] = Σ_k x[n + k] conj(m[k]) on the boundary-extended
//! signal. Blocks of outputs are accumulated tap by tap so the inner loop is a
//! vectorisable axpy. In f32 each accumulator carries a Kahan compensation
//! term (seed 000 IV-B: a second running variable for the small addends).

use crate::real::Real;
use num_complex::{Complex, Complex64};

use super::output::OutValue;
use super::OutputKind;

const BLOCK: usize = 64;

/// One mask, conjugated, split into real and imaginary parts.
#[derive(Debug, Clone)]
pub struct DirectMask<T> {
    re: Vec<T>,
    im: Vec<T>,
    half: usize,
}

impl<T: Real> DirectMask<T> {
    pub fn new(mask: &[Complex64]) -> Self {
        DirectMask {
            re: mask.iter().map(|c| T::of(c.re)).collect(),
            im: mask.iter().map(|c| T::of(-c.im)).collect(),
            half: mask.len() / 2,
        }
    }
}

/// The boundary-extended signal in split form: x[n] is at index n + pad.
pub struct Extended<'a, T> {
    pub re: &'a [T],
    pub im: Option<&'a [T]>,
    pub pad: usize,
}

#[inline(always)]
fn add<T: Real, const COMP: bool>(sum: &mut T, comp: &mut T, term: T) {
    if COMP {
        let y = term - *comp;
        let t = *sum + y;
        *comp = (t - *sum) - y;
        *sum = t;
    } else {
        *sum = *sum + term;
    }
}

#[allow(clippy::too_many_arguments)]
fn block<T: Real, const COMP: bool>(
    x: &Extended<T>,
    mask: &DirectMask<T>,
    first: usize,
    hop: usize,
    count: usize,
    re: &mut [T; BLOCK],
    im: &mut [T; BLOCK],
) {
    let mut cre = [T::zero(); BLOCK];
    let mut cim = [T::zero(); BLOCK];
    let start = first + x.pad - mask.half;
    for (e, (&mr, &mi)) in mask.re.iter().zip(&mask.im).enumerate() {
        let base = start + e;
        if hop == 1 && count == BLOCK {
            let xr: &[T; BLOCK] = x.re[base..base + BLOCK].try_into().expect("block");
            for j in 0..BLOCK {
                add::<T, COMP>(&mut re[j], &mut cre[j], xr[j] * mr);
                add::<T, COMP>(&mut im[j], &mut cim[j], xr[j] * mi);
            }
            if let Some(xi) = x.im {
                let xi: &[T; BLOCK] = xi[base..base + BLOCK].try_into().expect("block");
                for j in 0..BLOCK {
                    add::<T, COMP>(&mut re[j], &mut cre[j], -(xi[j] * mi));
                    add::<T, COMP>(&mut im[j], &mut cim[j], xi[j] * mr);
                }
            }
        } else {
            for j in 0..count {
                let xr = x.re[base + j * hop];
                add::<T, COMP>(&mut re[j], &mut cre[j], xr * mr);
                add::<T, COMP>(&mut im[j], &mut cim[j], xr * mi);
                if let Some(xi) = x.im {
                    let xi = xi[base + j * hop];
                    add::<T, COMP>(&mut re[j], &mut cre[j], -(xi * mi));
                    add::<T, COMP>(&mut im[j], &mut cim[j], xi * mr);
                }
            }
        }
    }
}

/// One row of the transform: columns n = 0, hop, 2 hop, ... < n_len.
pub fn row<T: Real, O: OutValue<T>>(
    x: &Extended<T>,
    mask: &DirectMask<T>,
    n_len: usize,
    hop: usize,
    kind: OutputKind,
    out: &mut [O],
) {
    let cols = n_len.div_ceil(hop);
    let mut c0 = 0;
    while c0 < cols {
        let count = BLOCK.min(cols - c0);
        let mut re = [T::zero(); BLOCK];
        let mut im = [T::zero(); BLOCK];
        if T::NEEDS_COMPENSATION {
            block::<T, true>(x, mask, c0 * hop, hop, count, &mut re, &mut im);
        } else {
            block::<T, false>(x, mask, c0 * hop, hop, count, &mut re, &mut im);
        }
        for j in 0..count {
            out[c0 + j] = O::from_coef(Complex::new(re[j], im[j]), kind);
        }
        c0 += count;
    }
}
