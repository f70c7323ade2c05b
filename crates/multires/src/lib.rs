//! multires: multiresolution (wavelet) analysis on CPUs and NVIDIA GPUs.
//!
//! The CWT ([`cwt`]) and the FIR filter bank ([`fir`]) are planned once and
//! executed by a [`backend`]. See DESIGN.md for the normative definitions.

pub mod backend;
pub mod boundary;
pub mod cwt;
pub mod fir;
pub mod io;
pub mod memory;
pub mod overlap_save;
pub mod plot;
pub mod real;
pub mod scales;
pub mod signal;
pub mod wavelets;

pub use boundary::Boundary;
pub use cwt::{CwtError, CwtOptions, CwtOutput, CwtPlan};
pub use scales::{Scale, ScaleSpec};
pub use signal::Signal;
pub use wavelets::Wavelet;
