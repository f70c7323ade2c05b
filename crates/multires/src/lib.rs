//! multires: multiresolution (wavelet) analysis on CPUs and NVIDIA GPUs.
//!
//! The CWT ([`cwt`]) and the FIR filter bank ([`fir`]) are planned once and
//! executed by a [`backend`]. See DESIGN.md for the normative definitions.

/// FromStr and Display for a plain enum from its user-facing names.
macro_rules! named_enum {
    ($t:ty, $what:literal, [$($name:literal => $v:expr),* $(,)?]) => {
        impl FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s.to_ascii_lowercase().as_str() {
                    $($name => Ok($v),)*
                    _ => Err(format!(concat!("unknown ", $what, " '{}': expected one of {}"), s, [$($name),*].join(", "))),
                }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $(if *self == $v { return f.write_str($name); })*
                Ok(())
            }
        }
    };
}

pub mod backend;
pub mod boundary;
pub mod codec;
pub mod cwt;
pub mod dwt;
pub mod fir;
pub mod io;
pub mod memory;
pub mod overlap_save;
pub mod plot;
pub mod real;
pub mod scales;
pub mod signal;
pub mod timefreq;
pub mod wavelets;

pub use boundary::Boundary;
pub use cwt::{CwtError, CwtOptions, CwtOutput, CwtPlan, CwtStream};
pub use scales::{Scale, ScaleSpec};
pub use signal::Signal;
pub use wavelets::Wavelet;
