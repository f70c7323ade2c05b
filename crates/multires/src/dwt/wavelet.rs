//! PyWavelets' discrete wavelets: the filter table (generated from PyWavelets
//! by tools/dwt/make_filter_table.py) and the filters derived from it.

use super::filter_table::TABLE;
use super::DwtError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symmetry {
    Asymmetric,
    NearSymmetric,
    Symmetric,
    AntiSymmetric,
}

impl Symmetry {
    pub fn name(self) -> &'static str {
        match self {
            Symmetry::Asymmetric => "asymmetric",
            Symmetry::NearSymmetric => "near symmetric",
            Symmetry::Symmetric => "symmetric",
            Symmetry::AntiSymmetric => "anti-symmetric",
        }
    }
}

/// One wavelet as stored: rec_lo, and dec_lo for biorthogonal ones.
#[derive(Debug)]
pub(crate) struct TableEntry {
    pub name: &'static str,
    pub family: &'static str,
    pub short_family: &'static str,
    pub orthogonal: bool,
    pub symmetry: Symmetry,
    pub vanishing_psi: Option<u32>,
    pub vanishing_phi: Option<u32>,
    pub rec_lo: &'static [f64],
    pub dec_lo: Option<&'static [f64]>,
}

/// A discrete wavelet with PyWavelets' four filters, as `pywt.Wavelet(name)`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteWavelet {
    pub name: &'static str,
    pub family: &'static str,
    pub short_family: &'static str,
    pub orthogonal: bool,
    pub symmetry: Symmetry,
    pub vanishing_psi: Option<u32>,
    pub vanishing_phi: Option<u32>,
    pub dec_lo: Vec<f64>,
    pub dec_hi: Vec<f64>,
    pub rec_lo: Vec<f64>,
    pub rec_hi: Vec<f64>,
}

impl DiscreteWavelet {
    pub fn from_name(name: &str) -> Result<Self, DwtError> {
        let key = name.trim().to_ascii_lowercase();
        let e = TABLE
            .iter()
            .find(|e| e.name == key)
            .ok_or_else(|| DwtError::UnknownWavelet(name.to_string()))?;
        Ok(Self::from_entry(e))
    }

    fn from_entry(e: &TableEntry) -> Self {
        let rec_lo = e.rec_lo.to_vec();
        let dec_lo: Vec<f64> = match e.dec_lo {
            Some(d) => d.to_vec(),
            None => rec_lo.iter().rev().copied().collect(),
        };
        let sign = |k: usize| if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        let dec_hi = rec_lo
            .iter()
            .enumerate()
            .map(|(k, v)| -sign(k) * v)
            .collect();
        let rec_hi = dec_lo
            .iter()
            .enumerate()
            .map(|(k, v)| sign(k) * v)
            .collect();
        DiscreteWavelet {
            name: e.name,
            family: e.family,
            short_family: e.short_family,
            orthogonal: e.orthogonal,
            symmetry: e.symmetry,
            vanishing_psi: e.vanishing_psi,
            vanishing_phi: e.vanishing_phi,
            dec_lo,
            dec_hi,
            rec_lo,
            rec_hi,
        }
    }

    /// Every wavelet of `pywt.wavelist(kind='discrete')`, in its order.
    pub fn all() -> impl Iterator<Item = DiscreteWavelet> {
        TABLE.iter().map(Self::from_entry)
    }

    pub fn names() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|e| e.name)
    }

    /// Filter length (PyWavelets' dec_len).
    pub fn filter_len(&self) -> usize {
        self.dec_lo.len()
    }

    /// Support width of the scaling function: the span of the nonzero taps
    /// minus one (PyWavelets pads some biorthogonal filters with zeros).
    pub fn support_width(&self) -> usize {
        let span = |f: &[f64]| {
            let first = f.iter().position(|v| *v != 0.0).unwrap_or(0);
            let last = f.iter().rposition(|v| *v != 0.0).unwrap_or(0);
            last - first
        };
        span(&self.dec_lo).max(span(&self.rec_lo))
    }
}
