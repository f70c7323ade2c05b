//! The transform's result: coefficients in the requested form, with the
//! scales, frequencies and cone of influence that give them meaning.
use super::{HalfFloat, OutputKind};
use crate::real::Real;
use ndarray::Array2;
use num_complex::{Complex, Complex32, Complex64};

/// A value the store step can produce from a coefficient: the complex
/// coefficient itself, or one real number derived from it (fused post-processing).
pub trait OutValue<T: Real>: Copy + Send + Sync + Default + bytemuck::Zeroable + 'static {
    fn from_coef(c: Complex<T>, kind: OutputKind) -> Self;

    /// dst[j] from src[j * hop]: one overlap-save run of a row.
    #[inline(always)]
    fn store_run(dst: &mut [Self], src: &[Complex<T>], hop: usize, kind: OutputKind) {
        if hop == 1 {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = Self::from_coef(*s, kind);
            }
        } else {
            for (d, s) in dst.iter_mut().zip(src.iter().step_by(hop)) {
                *d = Self::from_coef(*s, kind);
            }
        }
    }

    /// The same from split real and imaginary parts (None: imaginary zero).
    #[inline(always)]
    fn store_split(dst: &mut [Self], re: &[T], im: Option<&[T]>, hop: usize, kind: OutputKind) {
        match (im, hop) {
            (None, 1) => {
                for (d, r) in dst.iter_mut().zip(re) {
                    *d = Self::from_coef(Complex::new(*r, T::zero()), kind);
                }
            }
            (Some(im), 1) => {
                for ((d, r), i) in dst.iter_mut().zip(re).zip(im) {
                    *d = Self::from_coef(Complex::new(*r, *i), kind);
                }
            }
            (None, _) => {
                for (d, r) in dst.iter_mut().zip(re.iter().step_by(hop)) {
                    *d = Self::from_coef(Complex::new(*r, T::zero()), kind);
                }
            }
            (Some(im), _) => {
                let src = re.iter().zip(im).step_by(hop);
                for (d, (r, i)) in dst.iter_mut().zip(src) {
                    *d = Self::from_coef(Complex::new(*r, *i), kind);
                }
            }
        }
    }
}

impl<T: Real> OutValue<T> for Complex<T> {
    #[inline(always)]
    fn from_coef(c: Complex<T>, _: OutputKind) -> Self {
        c
    }
}

macro_rules! real_out {
    ($t:ty) => {
        impl OutValue<$t> for $t {
            #[inline(always)]
            fn from_coef(c: Complex<$t>, kind: OutputKind) -> Self {
                match kind {
                    OutputKind::Magnitude => c.norm(),
                    OutputKind::Power => c.norm_sqr(),
                    OutputKind::Phase => c.im.atan2(c.re),
                    OutputKind::Complex => c.re,
                }
            }
        }
    };
}
real_out!(f32);
real_out!(f64);

/// Coefficients, shape (scales, columns), rows in the order of the scales given.
#[derive(Debug, Clone, PartialEq)]
pub enum CwtValues {
    Complex32(Array2<Complex32>),
    Complex64(Array2<Complex64>),
    Real32(Array2<f32>),
    Real64(Array2<f64>),
    /// Magnitude or power as 16-bit floats, their bits.
    Half(Array2<u16>, HalfFloat),
}

impl CwtValues {
    pub fn shape(&self) -> (usize, usize) {
        let s = match self {
            CwtValues::Complex32(a) => a.dim(),
            CwtValues::Complex64(a) => a.dim(),
            CwtValues::Real32(a) => a.dim(),
            CwtValues::Real64(a) => a.dim(),
            CwtValues::Half(a, _) => a.dim(),
        };
        (s.0, s.1)
    }

    /// Everything as complex f64, for comparisons.
    pub fn to_complex64(&self) -> Array2<Complex64> {
        match self {
            CwtValues::Complex32(a) => a.mapv(|c| Complex64::new(c.re as f64, c.im as f64)),
            CwtValues::Complex64(a) => a.clone(),
            CwtValues::Real32(a) => a.mapv(|v| Complex64::new(v as f64, 0.0)),
            CwtValues::Real64(a) => a.mapv(|v| Complex64::new(v, 0.0)),
            CwtValues::Half(a, h) => a.mapv(|v| Complex64::new(h.value_of(v) as f64, 0.0)),
        }
    }

    /// |W| as f64 (the value itself for real outputs), for plots.
    pub fn magnitude(&self) -> Array2<f64> {
        match self {
            CwtValues::Complex32(a) => a.mapv(|c| c.norm() as f64),
            CwtValues::Complex64(a) => a.mapv(|c| c.norm()),
            CwtValues::Real32(a) => a.mapv(|v| v as f64),
            CwtValues::Real64(a) => a.clone(),
            CwtValues::Half(a, h) => a.mapv(|v| h.value_of(v) as f64),
        }
    }

    pub fn dtype(&self) -> &'static str {
        match self {
            CwtValues::Complex32(_) => "complex64",
            CwtValues::Complex64(_) => "complex128",
            CwtValues::Real32(_) => "float32",
            CwtValues::Real64(_) => "float64",
            CwtValues::Half(_, h) => h.numpy_name(),
        }
    }
}

/// Coefficients in memory the caller owns (row-major, scales x columns).
#[derive(Debug)]
pub enum CwtSlice<'a> {
    Complex32(&'a mut [Complex32]),
    Complex64(&'a mut [Complex64]),
    Real32(&'a mut [f32]),
    Real64(&'a mut [f64]),
    /// 16-bit floats' bits.
    Half(&'a mut [u16], HalfFloat),
}

impl CwtSlice<'_> {
    pub fn len(&self) -> usize {
        match self {
            CwtSlice::Complex32(a) => a.len(),
            CwtSlice::Complex64(a) => a.len(),
            CwtSlice::Real32(a) => a.len(),
            CwtSlice::Real64(a) => a.len(),
            CwtSlice::Half(a, _) => a.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn dtype(&self) -> &'static str {
        match self {
            CwtSlice::Complex32(_) => "complex64",
            CwtSlice::Complex64(_) => "complex128",
            CwtSlice::Real32(_) => "float32",
            CwtSlice::Real64(_) => "float64",
            CwtSlice::Half(_, h) => h.numpy_name(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CwtOutput {
    pub values: CwtValues,
    /// Scale of each row, in samples of the input signal.
    pub scales: Vec<f64>,
    /// Centre frequency of each row in Hz, when the sampling rate is known.
    pub frequencies: Option<Vec<f64>>,
    /// Per column: the largest scale not affected by the edges (cone of influence).
    pub coi: Vec<f64>,
    /// Input samples per output column.
    pub column_step: f64,
    /// Samples per second of the input, when known (the plot's time axis).
    pub sample_rate: Option<f64>,
    pub output: OutputKind,
}
