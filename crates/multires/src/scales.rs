//! Scale specifications. Linear scales keep numerator and denominator apart
//! until the mask is generated (seed 000, IV-B): `1/3:2:1/3` gives the exact
//! rationals 1/3, 2/3, ... rather than rounded decimals.

use crate::wavelets::Wavelet;

/// One scale, in samples: numerator / denominator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub numerator: f64,
    pub denominator: f64,
}

impl Scale {
    pub fn new(value: f64) -> Self {
        Scale {
            numerator: value,
            denominator: 1.0,
        }
    }
    pub fn rational(numerator: u64, denominator: u64) -> Self {
        Scale {
            numerator: numerator as f64,
            denominator: denominator as f64,
        }
    }
    pub fn value(&self) -> f64 {
        self.numerator / self.denominator
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum ScaleError {
    #[error("scale specification '{spec}': {why}")]
    Syntax { spec: String, why: String },
    #[error("scale {value} at position {index} is not a finite number > 0")]
    NotPositive { index: usize, value: f64 },
    #[error("no scales: {0}")]
    Empty(String),
    #[error("{count} scales requested; at most {max} are allowed")]
    TooMany { count: u128, max: usize },
}

/// Most scales one transform may have; beyond this the output cannot fit anyway.
pub const MAX_SCALES: usize = 1 << 20;

/// How the user asked for scales.
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleSpec {
    List(Vec<f64>),
    /// Inclusive linear range of exact rationals, written START:STOP[:STEP].
    Linear {
        spec: String,
    },
    /// `count` geometric scales from start to stop inclusive.
    Log {
        start: f64,
        stop: f64,
        count: usize,
    },
    /// Geometric scales with `voices` per octave from start up to stop.
    Voices {
        start: f64,
        stop: f64,
        voices: usize,
    },
    /// Frequencies fmin..fmax (Hz, inclusive) at sampling rate fs, mapped to
    /// scales through the wavelet's centre frequency.
    Frequencies {
        fmin: f64,
        fmax: f64,
        count: usize,
        fs: f64,
        log_spacing: bool,
    },
}

fn syntax(spec: &str, why: impl Into<String>) -> ScaleError {
    ScaleError::Syntax {
        spec: spec.to_string(),
        why: why.into(),
    }
}

/// Parses `P`, `P/Q` or a decimal into an exact rational (num, den).
fn parse_rational(text: &str, spec: &str) -> Result<(u64, u64), ScaleError> {
    let text = text.trim();
    let bad = || {
        syntax(
            spec,
            format!("'{text}' is not a positive number or fraction P/Q"),
        )
    };
    if let Some((p, q)) = text.split_once('/') {
        let p: u64 = p.trim().parse().map_err(|_| bad())?;
        let q: u64 = q.trim().parse().map_err(|_| bad())?;
        if q == 0 {
            return Err(syntax(spec, format!("'{text}' divides by zero")));
        }
        return Ok((p, q));
    }
    if let Ok(p) = text.parse::<u64>() {
        return Ok((p, 1));
    }
    // Exponent notation, as the other flags take it: 1e9, 2.5e-3 (kept
    // exact: 2.5e-3 is 25/10000).
    if let Some((m, e)) = text.split_once(['e', 'E']) {
        let (mut num, mut den) = parse_rational(m, spec)?;
        let e: i32 = e.trim().parse().map_err(|_| bad())?;
        let pow = 10u64.checked_pow(e.unsigned_abs()).ok_or_else(bad)?;
        if e >= 0 {
            num = num.checked_mul(pow).ok_or_else(bad)?;
        } else {
            den = den.checked_mul(pow).ok_or_else(bad)?;
        }
        let g = gcd(num, den).max(1);
        return Ok((num / g, den / g));
    }
    // A decimal: 2.25 -> 225/100.
    let (int, frac) = text.split_once('.').ok_or_else(bad)?;
    if frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let den = 10u64.pow(frac.len() as u32);
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let frac_v: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad())?
    };
    let num = int
        .checked_mul(den)
        .and_then(|v| v.checked_add(frac_v))
        .ok_or_else(bad)?;
    Ok((num, den))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn parse_f64(text: &str, spec: &str, what: &str) -> Result<f64, ScaleError> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| syntax(spec, format!("{what} '{text}' is not a number")))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(syntax(spec, format!("{what} {v} must be finite and > 0")));
    }
    Ok(v)
}

fn parse_count(text: &str, spec: &str, what: &str) -> Result<usize, ScaleError> {
    let v: usize = text
        .trim()
        .parse()
        .map_err(|_| syntax(spec, format!("{what} '{text}' is not a positive integer")))?;
    if v == 0 {
        return Err(syntax(spec, format!("{what} must be at least 1")));
    }
    if v > MAX_SCALES {
        return Err(ScaleError::TooMany {
            count: v as u128,
            max: MAX_SCALES,
        });
    }
    Ok(v)
}

impl ScaleSpec {
    /// `START:STOP[:STEP]`, inclusive, STEP 1 by default, fractions allowed.
    pub fn parse_linear(spec: &str) -> Result<Self, ScaleError> {
        let s = ScaleSpec::Linear {
            spec: spec.to_string(),
        };
        s.linear_scales()?;
        Ok(s)
    }

    /// `START:STOP:COUNT`, geometric.
    pub fn parse_log(spec: &str) -> Result<Self, ScaleError> {
        let p: Vec<&str> = spec.split(':').collect();
        if p.len() != 3 {
            return Err(syntax(spec, "expected START:STOP:COUNT, e.g. 1:1024:256"));
        }
        let start = parse_f64(p[0], spec, "start")?;
        let stop = parse_f64(p[1], spec, "stop")?;
        let count = parse_count(p[2], spec, "count")?;
        Ok(ScaleSpec::Log { start, stop, count })
    }

    /// `START:STOP:VOICES`, geometric with VOICES per octave.
    pub fn parse_voices(spec: &str) -> Result<Self, ScaleError> {
        let p: Vec<&str> = spec.split(':').collect();
        if p.len() != 3 {
            return Err(syntax(spec, "expected START:STOP:VOICES, e.g. 1:1024:16"));
        }
        let start = parse_f64(p[0], spec, "start")?;
        let stop = parse_f64(p[1], spec, "stop")?;
        let voices = parse_count(p[2], spec, "voices per octave")?;
        if stop < start {
            return Err(syntax(spec, "stop must be >= start"));
        }
        Ok(ScaleSpec::Voices {
            start,
            stop,
            voices,
        })
    }

    /// `FMIN:FMAX:COUNT` in Hz at sampling rate `fs`.
    pub fn parse_frequencies(spec: &str, fs: f64, log_spacing: bool) -> Result<Self, ScaleError> {
        let p: Vec<&str> = spec.split(':').collect();
        if p.len() != 3 {
            return Err(syntax(
                spec,
                "expected FMIN:FMAX:COUNT in Hz, e.g. 0.5:400:200",
            ));
        }
        let fmin = parse_f64(p[0], spec, "fmin")?;
        let fmax = parse_f64(p[1], spec, "fmax")?;
        let count = parse_count(p[2], spec, "count")?;
        if !(fs.is_finite() && fs > 0.0) {
            return Err(syntax(spec, format!("sampling rate {fs} must be > 0")));
        }
        Ok(ScaleSpec::Frequencies {
            fmin,
            fmax,
            count,
            fs,
            log_spacing,
        })
    }

    fn linear_scales(&self) -> Result<Vec<Scale>, ScaleError> {
        let ScaleSpec::Linear { spec } = self else {
            return Ok(Vec::new());
        };
        let p: Vec<&str> = spec.split(':').collect();
        if p.len() < 2 || p.len() > 3 {
            return Err(syntax(
                spec,
                "expected START:STOP[:STEP], e.g. 1:200 or 1/2:8:1/4",
            ));
        }
        let (a, ad) = parse_rational(p[0], spec)?;
        let (b, bd) = parse_rational(p[1], spec)?;
        let (c, cd) = if p.len() == 3 {
            parse_rational(p[2], spec)?
        } else {
            (1, 1)
        };
        if c == 0 {
            return Err(syntax(spec, "step must be > 0"));
        }
        if a == 0 {
            return Err(syntax(spec, "start must be > 0 (scales are positive)"));
        }
        // Common denominator D: everything becomes an integer numerator over D.
        let lcm = |x: u64, y: u64| -> Option<u64> { (x / gcd(x, y)).checked_mul(y) };
        let overflow = || syntax(spec, "fractions too fine to represent exactly");
        let d = lcm(ad, bd).and_then(|v| lcm(v, cd)).ok_or_else(overflow)?;
        let a = a.checked_mul(d / ad).ok_or_else(overflow)?;
        let b = b.checked_mul(d / bd).ok_or_else(overflow)?;
        let c = c.checked_mul(d / cd).ok_or_else(overflow)?;
        if b < a {
            return Err(syntax(spec, "stop must be >= start"));
        }
        let count = ((b - a) / c) as u128 + 1;
        if count > MAX_SCALES as u128 {
            return Err(ScaleError::TooMany {
                count,
                max: MAX_SCALES,
            });
        }
        Ok((0..count as u64)
            .map(|j| {
                let num = a + j * c;
                let g = gcd(num, d);
                Scale::rational(num / g, d / g)
            })
            .collect())
    }

    /// The scales, in the order the user gave them, checked positive and finite.
    pub fn scales(&self, wavelet: &Wavelet) -> Result<Vec<Scale>, ScaleError> {
        let scales: Vec<Scale> = match self {
            ScaleSpec::List(v) => v.iter().map(|&s| Scale::new(s)).collect(),
            ScaleSpec::Linear { .. } => self.linear_scales()?,
            ScaleSpec::Log { start, stop, count } => geometric(*start, *stop, *count),
            ScaleSpec::Voices {
                start,
                stop,
                voices,
            } => {
                let n = ((stop / start).log2() * *voices as f64 + 1e-9).floor() as usize + 1;
                if n > MAX_SCALES {
                    return Err(ScaleError::TooMany {
                        count: n as u128,
                        max: MAX_SCALES,
                    });
                }
                (0..n)
                    .map(|j| Scale::new(start * 2f64.powf(j as f64 / *voices as f64)))
                    .collect()
            }
            ScaleSpec::Frequencies {
                fmin,
                fmax,
                count,
                fs,
                log_spacing,
            } => {
                let freqs = if *log_spacing {
                    geometric(*fmin, *fmax, *count)
                        .into_iter()
                        .map(|s| s.value())
                        .collect::<Vec<_>>()
                } else {
                    linear(*fmin, *fmax, *count)
                };
                freqs
                    .into_iter()
                    .map(|f| Scale::new(wavelet.frequency_to_scale(f, *fs)))
                    .collect()
            }
        };
        if scales.is_empty() {
            return Err(ScaleError::Empty(match self {
                ScaleSpec::List(_) => {
                    "the list of scales is empty (is the --scales-file empty?)".into()
                }
                _ => "the specification gives an empty list".into(),
            }));
        }
        if scales.len() > MAX_SCALES {
            return Err(ScaleError::TooMany {
                count: scales.len() as u128,
                max: MAX_SCALES,
            });
        }
        for (index, s) in scales.iter().enumerate() {
            let v = s.value();
            if !(v.is_finite() && v > 0.0) {
                return Err(ScaleError::NotPositive { index, value: v });
            }
        }
        Ok(scales)
    }
}

fn geometric(start: f64, stop: f64, count: usize) -> Vec<Scale> {
    if count == 1 {
        return vec![Scale::new(start)];
    }
    let r = (stop / start).ln() / (count - 1) as f64;
    (0..count)
        .map(|j| {
            if j == count - 1 {
                Scale::new(stop)
            } else {
                Scale::new(start * (r * j as f64).exp())
            }
        })
        .collect()
}

fn linear(start: f64, stop: f64, count: usize) -> Vec<f64> {
    if count == 1 {
        return vec![start];
    }
    (0..count)
        .map(|j| start + (stop - start) * j as f64 / (count - 1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn morl() -> Wavelet {
        Wavelet::from_name("morl").unwrap()
    }

    #[test]
    fn linear_is_inclusive_and_rational() {
        let s = ScaleSpec::parse_linear("1:200")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.len(), 200);
        assert_eq!(s[199].value(), 200.0);
        let s = ScaleSpec::parse_linear("1/3:1:1/3")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].numerator, s[0].denominator), (1.0, 3.0));
        assert_eq!((s[1].numerator, s[1].denominator), (2.0, 3.0));
        assert_eq!(s[2].value(), 1.0);
        let s = ScaleSpec::parse_linear("0.5:2:0.25")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.len(), 7);
        assert_eq!(s[1].value(), 0.75);
    }

    #[test]
    fn log_and_voices() {
        let s = ScaleSpec::parse_log("1:1024:256")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.len(), 256);
        assert!((s[255].value() - 1024.0).abs() < 1e-12);
        let s = ScaleSpec::parse_voices("1:8:4")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.len(), 13);
        assert!((s[12].value() - 8.0).abs() < 1e-9);
    }

    #[test]
    fn frequencies_map_through_centre_frequency() {
        let w = morl();
        let s = ScaleSpec::parse_frequencies("1:100:2", 1000.0, false)
            .unwrap()
            .scales(&w)
            .unwrap();
        assert!((w.scale_to_frequency(s[0].value(), 1000.0) - 1.0).abs() < 1e-9);
        assert!((w.scale_to_frequency(s[1].value(), 1000.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn bad_specs_are_errors() {
        for spec in ["", "1", "0:5", "5:1", "1:5:0", "a:b", "1:2:3:4", "1/0:2"] {
            assert!(ScaleSpec::parse_linear(spec).is_err(), "{spec}");
        }
        assert!(ScaleSpec::parse_log("1:10:0").is_err());
        assert!(ScaleSpec::parse_log("-1:10:5").is_err());
        assert!(ScaleSpec::List(vec![1.0, f64::NAN])
            .scales(&morl())
            .is_err());
        assert!(ScaleSpec::List(vec![]).scales(&morl()).is_err());
        // Exponent notation is read exactly, as other flags read it.
        let s = ScaleSpec::parse_linear("1e9:1e9")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(s.iter().map(|s| s.value()).collect::<Vec<_>>(), [1e9]);
        let s = ScaleSpec::parse_linear("2.5e-1:1:25e-2")
            .unwrap()
            .scales(&morl())
            .unwrap();
        assert_eq!(
            s.iter().map(|s| s.value()).collect::<Vec<_>>(),
            [0.25, 0.5, 0.75, 1.0]
        );
        let e = ScaleSpec::List(vec![])
            .scales(&morl())
            .unwrap_err()
            .to_string();
        assert!(!e.contains("List("), "{e}");
        assert!(ScaleSpec::parse_linear("1:100000000").is_err());
    }
}
