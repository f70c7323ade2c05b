//! One level of the DWT on one signal, by any of the seed's algorithms.

use super::lattice::Lattice;
use super::lifting::Lifting;
use super::{
    coeff_len, matrix, polyphase, rec_len, Algorithm, Bank, DiscreteWavelet, DwtError, Granularity,
    Mode,
};
use crate::real::Real;
use rayon::prelude::*;

/// Longest filters lifting is offered for: beyond, the Euclidean
/// factorization's steps grow and the results drift past 1e-12.
const LIFTING_MAX_TAPS: usize = 10;

/// Outputs below which one level runs on one thread.
const PARALLEL_MIN: usize = 1 << 15;

/// A planned single-level transform: filters in working precision and, for
/// the lattice and lifting, their factorizations (done once).
#[derive(Debug, Clone)]
pub struct Transform<T> {
    pub wavelet: DiscreteWavelet,
    pub mode: Mode,
    pub algorithm: Algorithm,
    pub granularity: Granularity,
    bank: Bank<T>,
    lattice: Option<(Lattice, Lattice)>,
    lifting: Option<(Lifting, Lifting)>,
}

impl<T: Real> Transform<T> {
    pub fn new(
        wavelet: &DiscreteWavelet,
        mode: Mode,
        algorithm: Algorithm,
        granularity: Granularity,
    ) -> Result<Self, DwtError> {
        let e = polyphase::analysis(&wavelet.dec_lo, &wavelet.dec_hi);
        let r = polyphase::synthesis(&wavelet.rec_lo, &wavelet.rec_hi);
        let lattice = match algorithm {
            Algorithm::Lattice | Algorithm::LatticeNoWrap => {
                if !wavelet.orthogonal {
                    return Err(DwtError::NotAvailable(format!(
                        "the lattice needs an orthogonal wavelet and {} is biorthogonal; use --algorithm matrix or lifting",
                        wavelet.name
                    )));
                }
                Some((
                    Lattice::factorize(&e, wavelet.name)?,
                    Lattice::factorize(&r, wavelet.name)?,
                ))
            }
            _ => None,
        };
        let lifting = match algorithm {
            Algorithm::Lifting if wavelet.filter_len() > LIFTING_MAX_TAPS => {
                return Err(DwtError::NotAvailable(format!(
                    "lifting is offered for filters of up to {LIFTING_MAX_TAPS} taps (haar, CDF 5/3 = bior2.2, CDF 9/7 = bior4.4, db2-5, ...); {} has {} and its Euclidean factorization loses precision; use --algorithm matrix",
                    wavelet.name,
                    wavelet.filter_len()
                )))
            }
            Algorithm::Lifting => Some((
                Lifting::factorize(&e, wavelet.name)?,
                Lifting::factorize(&r, wavelet.name)?,
            )),
            _ => None,
        };
        Ok(Transform {
            wavelet: wavelet.clone(),
            mode,
            algorithm,
            granularity,
            bank: Bank::new(wavelet),
            lattice,
            lifting,
        })
    }

    pub(crate) fn bank(&self) -> &Bank<T> {
        &self.bank
    }

    pub fn filter_len(&self) -> usize {
        self.bank.len
    }

    pub fn coeff_len(&self, n: usize) -> usize {
        coeff_len(n, self.bank.len, self.mode)
    }

    /// Approximation and detail coefficients of x into ca, cd (coeff_len(N) each).
    /// PyWavelets refuses reflect and antireflect on fewer than two samples.
    pub fn check_len(&self, n: usize) -> Result<(), DwtError> {
        if n == 0 {
            return Err(DwtError::EmptySignal);
        }
        if n < 2 && matches!(self.mode, Mode::Reflect | Mode::Antireflect) {
            return Err(DwtError::TooShort { n, mode: self.mode });
        }
        Ok(())
    }

    pub fn forward(&self, x: &[T], ca: &mut [T], cd: &mut [T], parallel: bool) {
        let no = ca.len();
        debug_assert_eq!(no, self.coeff_len(x.len()));
        if x.is_empty() {
            return;
        }
        if self.algorithm == Algorithm::Lattice && self.mode == Mode::Periodization {
            // The seed's l2_ww: one circular pass over the whole sequence.
            return self.lattice_circular_forward(x, ca, cd);
        }
        if parallel && no >= PARALLEL_MIN {
            let chunk = (no / (4 * rayon::current_num_threads())).max(4096);
            ca.par_chunks_mut(chunk)
                .zip(cd.par_chunks_mut(chunk))
                .enumerate()
                .for_each(|(b, (a, d))| self.forward_range(x, b * chunk, a, d));
        } else {
            self.forward_range(x, 0, ca, cd);
        }
    }

    fn s0(&self) -> isize {
        if self.mode == Mode::Periodization {
            (self.bank.len / 2) as isize
        } else {
            1
        }
    }

    fn forward_range(&self, x: &[T], o0: usize, ca: &mut [T], cd: &mut [T]) {
        let g = self.granularity;
        match self.algorithm {
            Algorithm::Auto | Algorithm::Matrix => {
                let poly = self.algorithm == Algorithm::Auto;
                matrix::forward_wrap(x, &self.bank, self.mode, g, poly, o0, ca, cd)
            }
            Algorithm::MatrixNoWrap => {
                matrix::forward_nowrap(x, &self.bank, self.mode, g, o0, ca, cd)
            }
            Algorithm::Lattice | Algorithm::LatticeNoWrap => {
                let Some((lat, _)) = &self.lattice else {
                    return;
                };
                let back = lat.stages.len();
                let count = ca.len();
                let s0 = self.s0();
                let first = o0 as isize - back as isize;
                let (mut p0, mut p1): (Vec<T>, Vec<T>) = (0..(count + back) as isize)
                    .map(|k| {
                        let m = first + k;
                        (self.mode.at(x, 2 * m + s0), self.mode.at(x, 2 * m + s0 - 1))
                    })
                    .unzip();
                lat.apply(&mut p0, &mut p1, false);
                ca.copy_from_slice(&p0[back..]);
                cd.copy_from_slice(&p1[back..]);
            }
            Algorithm::Lifting => {
                let Some((lift, _)) = &self.lifting else {
                    return;
                };
                let (back, ahead) = lift.reach();
                let count = ca.len();
                let s0 = self.s0();
                let first = o0 as isize - back as isize;
                let (c0, c1): (Vec<T>, Vec<T>) = (0..(count + back + ahead) as isize)
                    .map(|k| {
                        let m = first + k;
                        (self.mode.at(x, 2 * m + s0), self.mode.at(x, 2 * m + s0 - 1))
                    })
                    .unzip();
                let mut ch = [c0, c1];
                lift.apply(&mut ch, back, ca, cd);
            }
        }
    }

    fn lattice_circular_forward(&self, x: &[T], ca: &mut [T], cd: &mut [T]) {
        let Some((lat, _)) = &self.lattice else {
            return;
        };
        let s0 = self.s0();
        for (m, (a, d)) in ca.iter_mut().zip(cd.iter_mut()).enumerate() {
            let m = m as isize;
            *a = self.mode.at(x, 2 * m + s0);
            *d = self.mode.at(x, 2 * m + s0 - 1);
        }
        lat.apply(ca, cd, true);
    }

    /// PyWavelets' idwt of (a, d) into out (rec_len(nc) samples).
    pub fn inverse(&self, a: &[T], d: &[T], out: &mut [T], parallel: bool) {
        let nc = a.len();
        debug_assert_eq!(out.len(), rec_len(nc, self.bank.len, self.mode));
        if out.is_empty() {
            return;
        }
        let run = |n0: usize, o: &mut [T]| self.inverse_range(a, d, n0, o);
        if parallel && out.len() >= 2 * PARALLEL_MIN {
            let chunk = ((out.len() / (4 * rayon::current_num_threads())).max(8192) + 1) & !1;
            out.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(b, o)| run(b * chunk, o));
        } else {
            run(0, out);
        }
    }

    fn inverse_range(&self, a: &[T], d: &[T], n0: usize, out: &mut [T]) {
        match self.algorithm {
            Algorithm::Auto | Algorithm::Matrix | Algorithm::MatrixNoWrap => {
                let poly = self.algorithm == Algorithm::Auto;
                matrix::inverse(a, d, &self.bank, self.mode, self.granularity, poly, n0, out)
            }
            Algorithm::Lattice | Algorithm::LatticeNoWrap | Algorithm::Lifting => {
                self.inverse_polyphase(a, d, n0, out)
            }
        }
    }

    /// Synthesis by a factorization: the pairs (y_2i, y_2i+1) over the
    /// positions this output range needs, then PyWavelets' index shift.
    fn inverse_polyphase(&self, a: &[T], d: &[T], n0: usize, out: &mut [T]) {
        let f = self.bank.len as isize;
        let periodic = self.mode == Mode::Periodization;
        let shift = super::synthesis_shift(f as usize, self.mode);
        // y positions m = n + shift (mod 2 nc when periodic) for n in the range.
        let m_first = n0 as isize + shift;
        let m_last = m_first + out.len() as isize - 1;
        let (i0, i1) = (m_first.div_euclid(2), m_last.div_euclid(2) + 1);
        let (back, ahead) = match (&self.lattice, &self.lifting) {
            (Some((_, lat)), _) => (lat.stages.len(), 0),
            (_, Some((_, lift))) => lift.reach(),
            _ => return,
        };
        let q = |i: isize| -> (T, T) {
            match super::coefficient_at(i, a.len(), periodic) {
                Some(j) => (a[j], d[j]),
                None => (T::zero(), T::zero()),
            }
        };
        let first = i0 - back as isize;
        let span = (i1 - i0) as usize;
        let (c0, c1): (Vec<T>, Vec<T>) = (0..(span + back + ahead) as isize)
            .map(|k| q(first + k))
            .unzip();
        let mut ye = vec![T::zero(); span];
        let mut yo = vec![T::zero(); span];
        match (&self.lattice, &self.lifting) {
            (Some((_, lat)), _) => {
                let (mut p0, mut p1) = (c0, c1);
                lat.apply(&mut p0, &mut p1, false);
                ye.copy_from_slice(&p0[back..back + span]);
                yo.copy_from_slice(&p1[back..back + span]);
            }
            (_, Some((_, lift))) => {
                let mut ch = [c0, c1];
                lift.apply(&mut ch, back, &mut ye, &mut yo);
            }
            _ => return,
        }
        for (k, v) in out.iter_mut().enumerate() {
            let m = m_first + k as isize;
            let i = (m.div_euclid(2) - i0) as usize;
            *v = if m.rem_euclid(2) == 0 { ye[i] } else { yo[i] };
        }
    }
}

/// One level of the DWT: (cA, cD), as `pywt.dwt(x, wavelet, mode)`.
pub fn dwt<T: Real>(x: &[T], t: &Transform<T>) -> Result<(Vec<T>, Vec<T>), DwtError> {
    t.check_len(x.len())?;
    let no = t.coeff_len(x.len());
    let mut ca = vec![T::zero(); no];
    let mut cd = vec![T::zero(); no];
    t.forward(x, &mut ca, &mut cd, true);
    Ok((ca, cd))
}

/// One inverse level, as `pywt.idwt(cA, cD, wavelet, mode)`.
pub fn idwt<T: Real>(a: &[T], d: &[T], t: &Transform<T>) -> Result<Vec<T>, DwtError> {
    check_pair(a.len(), d.len(), t)?;
    let mut out = vec![T::zero(); rec_len(a.len(), t.filter_len(), t.mode)];
    t.inverse(a, d, &mut out, true);
    Ok(out)
}

pub(crate) fn check_pair<T: Real>(na: usize, nd: usize, t: &Transform<T>) -> Result<(), DwtError> {
    if na != nd {
        return Err(DwtError::CoefficientMismatch(format!(
            "approximation has {na} coefficients and detail {nd}; they must be equal"
        )));
    }
    if na == 0 {
        return Err(DwtError::CoefficientMismatch("no coefficients".into()));
    }
    let f = t.filter_len();
    if t.mode != Mode::Periodization && na < f / 2 {
        return Err(DwtError::CoefficientMismatch(format!(
            "{na} coefficients are too few for {} ({f} taps) in mode {}: at least {} are needed; were they made with this wavelet and mode?",
            t.wavelet.name,
            t.mode,
            f / 2
        )));
    }
    Ok(())
}
