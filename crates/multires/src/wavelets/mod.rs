//! Continuous wavelets: the mother functions ψ(t) sampled into CWT masks.
//!
//! Names and parameter conventions follow PyWavelets (`morl`, `cmorB-C`,
//! `mexh`, `gausP`, `cgauP`, `shanB-C`, `fbspM-B-C`) and Torrence & Compo /
//! Lilly for the others (`paulM`, `dogM`, `morseB-G`). `user:PATH` loads a
//! sampled mother function from a file (the seed's "any multi-resolution
//! function").

mod admissibility;
mod gaussian;
mod morlet;
mod morse;
mod paul;
mod shannon;
mod user;

use num_complex::Complex64;
use std::f64::consts::PI;
use std::path::Path;

pub use admissibility::Admissibility;
pub use user::UserWavelet;

/// Errors met while naming or building a wavelet.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaveletError {
    #[error("unknown wavelet '{0}': expected one of morl, cmorB-C, mexh, gaus1..8, cgau1..8, shanB-C, fbspM-B-C, paulM, dogM, morseB-G or user:FILE.npy (see `multires wavelets`)")]
    Unknown(String),
    #[error("wavelet '{name}': {why}")]
    BadParameter { name: String, why: String },
    #[error("user wavelet file '{path}': {why}")]
    UserFile { path: String, why: String },
}

/// Which formula ψ follows; parameters are kept as the user wrote them.
#[derive(Debug, Clone, PartialEq)]
pub enum Family {
    /// Real Morlet of the seed: exp(-t²/2) cos(5t).
    Morlet,
    /// Complex Morlet cmorB-C: (πB)^-1/2 exp(-t²/B) exp(2πiCt).
    ComplexMorlet { bandwidth: f64, center: f64 },
    /// Mexican hat (second derivative of a Gaussian, unit energy).
    MexicanHat,
    /// gausP: P-th derivative of exp(-t²), unit energy, PyWavelets' sign.
    Gaussian { order: u32 },
    /// cgauP: P-th derivative of exp(-it) exp(-t²), unit energy.
    ComplexGaussian { order: u32 },
    /// shanB-C: √B sinc(Bt) exp(2πiCt).
    Shannon { bandwidth: f64, center: f64 },
    /// fbspM-B-C: √B sinc(Bt/M)^M exp(2πiCt).
    FrequencyBSpline {
        order: u32,
        bandwidth: f64,
        center: f64,
    },
    /// Paul(m) of Torrence & Compo.
    Paul { order: u32 },
    /// DOG(m) of Torrence & Compo: derivative of exp(-t²/2).
    DerivativeOfGaussian { order: u32 },
    /// Generalized Morse (β, γ) of Lilly & Olhede, defined in frequency.
    Morse { beta: f64, gamma: f64 },
    /// A mother function sampled on a grid, read from a file.
    User,
    /// dψ/dt of another wavelet (the synchrosqueezing phase transform's
    /// second transform).
    TimeDerivative,
}

/// ψ as a formula with its numbers, for backends that evaluate it elsewhere
/// (the GPU samples masks on the device, one thread per tap).
#[derive(Debug, Clone, Copy)]
pub enum Formula<'a> {
    Morlet,
    ComplexMorlet {
        bandwidth: f64,
        center: f64,
    },
    MexicanHat,
    /// q(t) exp(-a t²) exp(-i c t), q's coefficients lowest power first;
    /// the imaginary part is dropped when `real`.
    GaussianPolynomial {
        poly: &'a [Complex64],
        a: f64,
        c: f64,
        real: bool,
    },
    Shannon {
        bandwidth: f64,
        center: f64,
    },
    FrequencyBSpline {
        order: u32,
        bandwidth: f64,
        center: f64,
    },
    Paul {
        order: u32,
    },
    /// sum_j weights[j] exp(i j step t), re-anchored every 64 terms.
    FourierSum {
        weights: &'a [f64],
        step: f64,
    },
    /// Catmull-Rom through uniform samples on [-half_support, half_support].
    Sampled {
        samples: &'a [Complex64],
        half_support: f64,
    },
    /// dψ/dt of the wavelet given, by a central difference on the host
    /// (no device formula yet).
    TimeDerivative(&'a Wavelet),
}

/// A continuous mother wavelet ready to be sampled into masks.
#[derive(Debug, Clone)]
pub struct Wavelet {
    name: String,
    family: Family,
    half_support: f64,
    imp: Imp,
    /// Measured on first use: most transforms never ask.
    center_frequency: std::sync::OnceLock<f64>,
    rms_duration: std::sync::OnceLock<f64>,
    admissibility: std::sync::OnceLock<Admissibility>,
    /// ψ on the quadrature grid of `fourier_transform` (t0, dt, values).
    fourier_samples: std::sync::OnceLock<(f64, f64, Vec<Complex64>)>,
}

#[derive(Debug, Clone)]
enum Imp {
    Closed,
    Gaussian(gaussian::GaussianDerivative),
    Morse(morse::MorseWavelet),
    User(UserWavelet),
    Derivative(Box<Wavelet>),
}

impl Wavelet {
    /// Parses a PyWavelets-style name such as `morl`, `cmor1.5-1.0`, `gaus3`.
    pub fn from_name(name: &str) -> Result<Self, WaveletError> {
        let name = name.trim();
        if let Some(path) = name.strip_prefix("user:") {
            return Self::from_user_file(Path::new(path), 8.0);
        }
        let mut lower = name.to_ascii_lowercase();
        if let Some(full) = bare_default(&lower) {
            lower = full.to_string();
        }
        let (family, imp, half_support) = parse_family(&lower, name)?;
        Ok(Self::finish(lower, family, imp, half_support))
    }

    /// A mother function sampled uniformly on [-half_support, half_support].
    pub fn from_user_file(path: &Path, half_support: f64) -> Result<Self, WaveletError> {
        let user = UserWavelet::from_file(path, half_support)?;
        let b = user.half_support();
        Ok(Self::finish(
            format!("user:{}", path.display()),
            Family::User,
            Imp::User(user),
            b,
        ))
    }

    /// A mother function given as samples on [-half_support, half_support].
    pub fn from_user_samples(
        samples: Vec<Complex64>,
        half_support: f64,
    ) -> Result<Self, WaveletError> {
        let user = UserWavelet::new(samples, half_support, "samples")?;
        Ok(Self::finish(
            "user".into(),
            Family::User,
            Imp::User(user),
            half_support,
        ))
    }

    fn finish(name: String, family: Family, imp: Imp, half_support: f64) -> Self {
        Wavelet {
            name,
            family,
            half_support,
            imp,
            center_frequency: std::sync::OnceLock::new(),
            rms_duration: std::sync::OnceLock::new(),
            admissibility: std::sync::OnceLock::new(),
            fourier_samples: std::sync::OnceLock::new(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// dψ/dt as a wavelet of its own, same support: the mask of
    /// dW/dn is -(1/s) times its mask, so one more CWT gives the exact
    /// time derivative of the transform (no finite difference of W).
    pub fn time_derivative(&self) -> Wavelet {
        Self::finish(
            format!("d/dt {}", self.name),
            Family::TimeDerivative,
            Imp::Derivative(Box::new(self.clone())),
            self.half_support,
        )
    }
    pub fn family(&self) -> &Family {
        &self.family
    }
    /// B of DESIGN.md: masks span |k| <= ceil(B s).
    pub fn half_support(&self) -> f64 {
        self.half_support
    }
    /// Whether ψ has an imaginary part (a real ψ on a real signal gives a real CWT).
    pub fn is_complex(&self) -> bool {
        match &self.family {
            Family::Morlet
            | Family::MexicanHat
            | Family::Gaussian { .. }
            | Family::DerivativeOfGaussian { .. } => false,
            Family::User => matches!(&self.imp, Imp::User(u) if u.is_complex()),
            Family::TimeDerivative => matches!(&self.imp, Imp::Derivative(w) if w.is_complex()),
            _ => true,
        }
    }

    /// ψ as a formula (what `psi` evaluates).
    pub fn formula(&self) -> Formula<'_> {
        match (&self.family, &self.imp) {
            (_, Imp::Gaussian(g)) => g.formula(),
            (_, Imp::Morse(m)) => m.formula(),
            (_, Imp::User(u)) => u.formula(),
            (_, Imp::Derivative(w)) => Formula::TimeDerivative(w),
            (Family::ComplexMorlet { bandwidth, center }, _) => Formula::ComplexMorlet {
                bandwidth: *bandwidth,
                center: *center,
            },
            (Family::MexicanHat, _) => Formula::MexicanHat,
            (Family::Shannon { bandwidth, center }, _) => Formula::Shannon {
                bandwidth: *bandwidth,
                center: *center,
            },
            (
                Family::FrequencyBSpline {
                    order,
                    bandwidth,
                    center,
                },
                _,
            ) => Formula::FrequencyBSpline {
                order: *order,
                bandwidth: *bandwidth,
                center: *center,
            },
            (Family::Paul { order }, _) => Formula::Paul { order: *order },
            _ => Formula::Morlet,
        }
    }

    /// ψ(t).
    pub fn psi(&self, t: f64) -> Complex64 {
        match (&self.family, &self.imp) {
            (_, Imp::Gaussian(g)) => g.eval(t),
            (_, Imp::Morse(m)) => m.eval(t),
            (_, Imp::User(u)) => u.eval(t),
            (_, Imp::Derivative(w)) => derivative_at(w, t),
            (Family::Morlet, _) => Complex64::new(morlet::morl(t), 0.0),
            (Family::ComplexMorlet { bandwidth, center }, _) => {
                morlet::cmor(t, *bandwidth, *center)
            }
            (Family::MexicanHat, _) => Complex64::new(gaussian::mexh(t), 0.0),
            (Family::Shannon { bandwidth, center }, _) => shannon::shan(t, *bandwidth, *center),
            (
                Family::FrequencyBSpline {
                    order,
                    bandwidth,
                    center,
                },
                _,
            ) => shannon::fbsp(t, *order, *bandwidth, *center),
            (Family::Paul { order }, _) => paul::paul(t, *order),
            _ => Complex64::new(0.0, 0.0),
        }
    }

    /// ψ at t0 + k dt, k = 0..n, where the family has a faster way than n
    /// evaluations of `psi` (Morse and its derivative: one chirp-z
    /// transform per mask, equal to `psi` to ~1e-15 of the mask's peak).
    pub fn psi_grid(&self, t0: f64, dt: f64, n: usize) -> Option<Vec<Complex64>> {
        const WORTH_IT: usize = 64;
        if n < WORTH_IT || !self.has_psi_grid() {
            return None;
        }
        match &self.imp {
            Imp::Morse(m) => Some(m.eval_grid(t0, dt, n, false)),
            Imp::Derivative(w) => match &w.imp {
                Imp::Morse(m) => Some(m.eval_grid(t0, dt, n, true)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `psi_grid` has a whole-grid evaluation for this family.
    pub fn has_psi_grid(&self) -> bool {
        match &self.imp {
            Imp::Morse(_) => true,
            Imp::Derivative(w) => matches!(w.imp, Imp::Morse(_)),
            _ => false,
        }
    }

    /// Frequency (cycles per unit of t) where |ψ̂| peaks, measured numerically
    /// so every family, user files included, answers the same way.
    pub fn center_frequency(&self) -> f64 {
        *self
            .center_frequency
            .get_or_init(|| self.measure_center_frequency())
    }

    /// Frequency in Hz seen by a scale `scale` (in samples) at sampling rate `fs`.
    pub fn scale_to_frequency(&self, scale: f64, fs: f64) -> f64 {
        self.center_frequency() * fs / scale
    }

    /// Scale (in samples) whose centre frequency is `freq` Hz at rate `fs`.
    pub fn frequency_to_scale(&self, freq: f64, fs: f64) -> f64 {
        self.center_frequency() * fs / freq
    }

    /// Half-width of the cone of influence per unit scale: 2 σ_t, with σ_t the
    /// RMS duration of |ψ|²; for the Morlet this is Torrence & Compo's √2.
    pub fn coi_factor(&self) -> f64 {
        2.0 * *self
            .rms_duration
            .get_or_init(|| self.measure_rms_duration())
    }

    fn quadrature_grid(&self) -> (f64, usize) {
        let b = self.half_support;
        let n = 16384usize;
        (2.0 * b / n as f64, n)
    }

    fn measure_rms_duration(&self) -> f64 {
        let (dt, n) = self.quadrature_grid();
        let b = self.half_support;
        let (mut e, mut m2) = (0.0, 0.0);
        for i in 0..=n {
            let t = -b + i as f64 * dt;
            let p = self.psi(t).norm_sqr();
            e += p;
            m2 += t * t * p;
        }
        if e > 0.0 {
            (m2 / e).sqrt()
        } else {
            0.0
        }
    }

    fn measure_center_frequency(&self) -> f64 {
        let b = self.half_support;
        let n = 4096usize;
        let dt = 2.0 * b / n as f64;
        let samples: Vec<(f64, Complex64)> = (0..=n)
            .map(|i| {
                let t = -b + i as f64 * dt;
                (t, self.psi(t))
            })
            .collect();
        // |ψ̂(f)| = |∫ψ(t) e^{-2πift} dt|; positive frequencies carry the analytic part.
        let spectrum = |f: f64| -> f64 {
            let mut acc = Complex64::new(0.0, 0.0);
            for &(t, p) in &samples {
                acc += p * Complex64::from_polar(1.0, -2.0 * PI * f * t);
            }
            acc.norm()
        };
        // Coarse scan then golden-section refinement. The Nyquist of the grid
        // bounds the search; realistic wavelets peak well below 5 cycles/unit.
        let fmax = (0.5 / dt).min(8.0);
        let steps = 400;
        let mut best = (0.0, -1.0);
        for i in 1..=steps {
            let f = fmax * i as f64 / steps as f64;
            let v = spectrum(f);
            if v > best.1 {
                best = (f, v);
            }
        }
        let h = fmax / steps as f64;
        let (mut lo, mut hi) = ((best.0 - h).max(0.0), best.0 + h);
        let g = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..60 {
            let a = hi - g * (hi - lo);
            let c = lo + g * (hi - lo);
            if spectrum(a) > spectrum(c) {
                hi = c;
            } else {
                lo = a;
            }
        }
        0.5 * (lo + hi)
    }
}

/// ψ'(t): in closed form for Morse and cmor, else by the eighth-order
/// central difference with step h = 2^-10
/// (the truncation error ~h^8 ψ^(9) is far below the rounding ~1e-13 |ψ|/h,
/// for every wavelet here, whose oscillations are a few per unit of t).
fn derivative_at(w: &Wavelet, t: f64) -> Complex64 {
    // Closed forms where ψ has one (and Morse's Fourier sum, 8x cheaper
    // than the difference's eight evaluations).
    match (&w.family, &w.imp) {
        (_, Imp::Morse(m)) => return m.eval_derivative(t),
        (Family::ComplexMorlet { bandwidth, center }, _) => {
            let d = Complex64::new(-2.0 * t / bandwidth, 2.0 * PI * center);
            return morlet::cmor(t, *bandwidth, *center) * d;
        }
        _ => {}
    }
    central_difference(w, t)
}

fn central_difference(w: &Wavelet, t: f64) -> Complex64 {
    const H: f64 = 1.0 / 1024.0;
    const C: [f64; 4] = [4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0];
    let mut acc = Complex64::new(0.0, 0.0);
    for (j, c) in C.iter().enumerate() {
        let d = (j + 1) as f64 * H;
        acc += (w.psi(t + d) - w.psi(t - d)) * *c;
    }
    acc / H
}

fn parse_params(s: &str, n: usize, full: &str, form: &str) -> Result<Vec<f64>, WaveletError> {
    let parts: Vec<&str> = s.split('-').collect();
    let bad = |why: String| WaveletError::BadParameter {
        name: full.to_string(),
        why,
    };
    if parts.len() != n {
        return Err(bad(format!("expected the form {form}")));
    }
    parts
        .iter()
        .map(|p| {
            let v: f64 = p
                .parse()
                .map_err(|_| bad(format!("'{p}' is not a number; expected the form {form}")))?;
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(format!("parameter {p} must be finite and > 0")));
            }
            Ok(v)
        })
        .collect()
}

fn parse_order(s: &str, full: &str, lo: u32, hi: u32) -> Result<u32, WaveletError> {
    let order: u32 = s.parse().map_err(|_| WaveletError::Unknown(full.into()))?;
    if order < lo || order > hi {
        return Err(WaveletError::BadParameter {
            name: full.into(),
            why: format!("order {order} is outside {lo}..={hi}"),
        });
    }
    Ok(order)
}

/// The parameters PyWavelets assumes for a family named without them
/// (`cmor` is cmor1.0-0.5, `shan` shan0.5-1.0, `fbsp` fbsp2-1.0-0.5; pywt
/// warns that the bare names are deprecated): the full name, for the
/// caller to say what was assumed.
pub fn bare_default(name: &str) -> Option<&'static str> {
    match name.trim().to_ascii_lowercase().as_str() {
        "cmor" => Some("cmor1.0-0.5"),
        "shan" => Some("shan0.5-1.0"),
        "fbsp" => Some("fbsp2-1.0-0.5"),
        _ => None,
    }
}

fn parse_family(lower: &str, full: &str) -> Result<(Family, Imp, f64), WaveletError> {
    let closed = |f: Family, b: f64| Ok((f, Imp::Closed, b));
    if lower == "morl" || lower == "morlet" {
        return closed(Family::Morlet, 8.0);
    }
    if lower == "mexh" {
        return closed(Family::MexicanHat, 8.0);
    }
    if let Some(rest) = lower.strip_prefix("cmor") {
        let p = parse_params(rest, 2, full, "cmorB-C, e.g. cmor1.5-1.0")?;
        return closed(
            Family::ComplexMorlet {
                bandwidth: p[0],
                center: p[1],
            },
            8.0,
        );
    }
    if let Some(rest) = lower.strip_prefix("shan") {
        let p = parse_params(rest, 2, full, "shanB-C, e.g. shan1.5-1.0")?;
        return closed(
            Family::Shannon {
                bandwidth: p[0],
                center: p[1],
            },
            20.0,
        );
    }
    if let Some(rest) = lower.strip_prefix("fbsp") {
        let p = parse_params(rest, 3, full, "fbspM-B-C, e.g. fbsp2-1.0-1.5")?;
        if p[0].fract() != 0.0 || p[0] < 1.0 {
            return Err(WaveletError::BadParameter {
                name: full.into(),
                why: "the spline order M must be an integer >= 1".into(),
            });
        }
        return closed(
            Family::FrequencyBSpline {
                order: p[0] as u32,
                bandwidth: p[1],
                center: p[2],
            },
            20.0,
        );
    }
    if let Some(rest) = lower.strip_prefix("cgau") {
        let order = parse_order(rest, full, 1, 8)?;
        let g = gaussian::GaussianDerivative::new(order, true);
        return Ok((Family::ComplexGaussian { order }, Imp::Gaussian(g), 5.0));
    }
    if let Some(rest) = lower.strip_prefix("gaus") {
        let order = parse_order(rest, full, 1, 8)?;
        let g = gaussian::GaussianDerivative::new(order, false);
        return Ok((Family::Gaussian { order }, Imp::Gaussian(g), 5.0));
    }
    if let Some(rest) = lower.strip_prefix("paul") {
        let rest = if rest.is_empty() { "4" } else { rest };
        let order = parse_order(rest, full, 1, 20)?;
        return closed(Family::Paul { order }, 16.0);
    }
    if let Some(rest) = lower.strip_prefix("dog") {
        let rest = if rest.is_empty() { "2" } else { rest };
        let order = parse_order(rest, full, 1, 12)?;
        let g = gaussian::GaussianDerivative::dog(order);
        return Ok((
            Family::DerivativeOfGaussian { order },
            Imp::Gaussian(g),
            8.0,
        ));
    }
    if let Some(rest) = lower.strip_prefix("morse") {
        let rest = if rest.is_empty() { "20-3" } else { rest };
        let p = parse_params(rest, 2, full, "morseB-G (beta, gamma), e.g. morse20-3")?;
        let m = morse::MorseWavelet::new(p[0], p[1]).map_err(|why| WaveletError::BadParameter {
            name: full.into(),
            why,
        })?;
        let b = m.half_support();
        return Ok((
            Family::Morse {
                beta: p[0],
                gamma: p[1],
            },
            Imp::Morse(m),
            b,
        ));
    }
    Err(WaveletError::Unknown(full.into()))
}

/// Names of the built-in continuous families, for listings and errors.
pub const CONTINUOUS_FAMILIES: &[(&str, &str)] = &[
    ("morl", "real Morlet of the seed, exp(-t²/2)cos(5t), B = 8"),
    (
        "cmorB-C",
        "complex Morlet, bandwidth B, centre frequency C, B = 8",
    ),
    ("mexh", "Mexican hat, B = 8"),
    ("gaus1..8", "derivatives of exp(-t²), B = 5"),
    ("cgau1..8", "derivatives of exp(-it)exp(-t²), B = 5"),
    ("shanB-C", "Shannon, B = 20"),
    ("fbspM-B-C", "frequency B-spline, B = 20"),
    ("paulM", "Paul (Torrence & Compo), order 1..20, B = 16"),
    ("dogM", "derivative of Gaussian (Torrence & Compo), B = 8"),
    ("morseB-G", "generalized Morse, beta B, gamma G (Lilly)"),
    ("user:F.npy", "mother function sampled uniformly on [-8, 8]"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_morse_grid_equals_tap_by_tap_evaluation() {
        for name in ["morse60-3", "morse3-2", "morse20-3"] {
            let w = Wavelet::from_name(name).unwrap();
            let d = w.time_derivative();
            for (t0, dt, n) in [
                (-26.0, 0.01, 5201),
                (-3.3, 1.0 / 7.0, 200),
                (-40.0, 0.37, 217),
            ] {
                for v in [&w, &d] {
                    let g = v.psi_grid(t0, dt, n).unwrap();
                    let peak = g.iter().map(|c| c.norm()).fold(0.0f64, f64::max);
                    for (k, c) in g.iter().enumerate() {
                        let want = v.psi(t0 + k as f64 * dt);
                        assert!(
                            (c - want).norm() < 1e-13 * peak,
                            "{} {k}: {c} vs {want}",
                            v.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn closed_form_derivatives_equal_the_central_difference() {
        for name in ["cmor1.5-1.0", "cmor2.0-0.5", "morse60-3", "morse3-2"] {
            let w = Wavelet::from_name(name).unwrap();
            let d = w.time_derivative();
            let peak = (0..200)
                .map(|k| central_difference(&w, -4.0 + 0.04 * k as f64).norm())
                .fold(0.0f64, f64::max);
            for k in 0..200 {
                let t = -4.0 + 0.04 * k as f64;
                let (a, b) = (d.psi(t), central_difference(&w, t));
                assert!((a - b).norm() < 1e-9 * peak, "{name} at {t}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn morlet_matches_seed_formula() {
        let w = Wavelet::from_name("morl").unwrap();
        for &t in &[-3.0, -0.5, 0.0, 0.7, 2.2] {
            let want = (-(t * t) / 2.0f64).exp() * (5.0 * t).cos();
            assert!((w.psi(t).re - want).abs() < 1e-15);
            assert_eq!(w.psi(t).im, 0.0);
        }
        // centre frequency of exp(-t²/2)cos(5t) peaks just above 5/2π.
        let fc = w.center_frequency();
        assert!((fc - 5.0 / (2.0 * PI)).abs() < 0.01, "fc = {fc}");
        assert!((w.coi_factor() - 2f64.sqrt()).abs() < 1e-3);
    }

    #[test]
    fn complex_morlet_centre_is_c() {
        let w = Wavelet::from_name("cmor1.5-1.0").unwrap();
        assert!((w.center_frequency() - 1.0).abs() < 1e-6);
        assert!(w.is_complex());
    }

    /// PyWavelets reads bare `cmor` as cmor1.0-0.5, `shan` as shan0.5-1.0
    /// and `fbsp` as fbsp2-1.0-0.5.
    #[test]
    fn bare_family_names_take_pywavelets_parameters() {
        for (bare, full) in [
            ("cmor", "cmor1.0-0.5"),
            ("shan", "shan0.5-1.0"),
            ("fbsp", "fbsp2-1.0-0.5"),
        ] {
            let (a, b) = (
                Wavelet::from_name(bare).unwrap(),
                Wavelet::from_name(full).unwrap(),
            );
            assert_eq!(a.name(), full);
            for t in [-1.3, 0.0, 0.4, 2.2] {
                assert_eq!(a.psi(t), b.psi(t), "{bare} at {t}");
            }
            assert_eq!(bare_default(bare), Some(full));
        }
        assert_eq!(bare_default("cmor1.5-1.0"), None);
    }

    #[test]
    fn bad_names_are_errors() {
        for n in [
            "nope",
            "gaus9",
            "cmor1.5",
            "cmor-1-1",
            "fbsp1.5-1-1",
            "paul0",
            "morsex",
        ] {
            assert!(Wavelet::from_name(n).is_err(), "{n} should fail");
        }
    }
}
