//! The floating-point types every kernel is written once for.
use num_complex::Complex;

/// f32 or f64: what rustfft accepts plus the arithmetic the kernels use.
pub trait Real:
    rustfft::FftNum + num_traits::Float + Default + bytemuck::Pod + Send + Sync + 'static
{
    /// Whether accumulation in this type needs compensation to stay accurate.
    const NEEDS_COMPENSATION: bool;
    const NAME: &'static str;
    fn of(v: f64) -> Self;
    fn f64(self) -> f64;
}

impl Real for f32 {
    const NEEDS_COMPENSATION: bool = true;
    const NAME: &'static str = "f32";
    fn of(v: f64) -> Self {
        v as f32
    }
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    const NEEDS_COMPENSATION: bool = false;
    const NAME: &'static str = "f64";
    fn of(v: f64) -> Self {
        v
    }
    fn f64(self) -> f64 {
        self
    }
}

pub fn complex_of<T: Real>(c: num_complex::Complex64) -> Complex<T> {
    Complex::new(T::of(c.re), T::of(c.im))
}
