//! The inverse CWT, synchrosqueezing and ridges over numpy arrays; the
//! Python package gives them ssqueezepy's names and defaults.
use crate::{backend, backend_err, cwt_err, parse, value_err};
use multires::timefreq::{self, IcwtOptions, MapRange, SsqOptions, TimeFreqError};
use multires::{CwtOptions, Scale, Signal, Wavelet};
use num_complex::Complex64;
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn tf_err(e: TimeFreqError) -> PyErr {
    match e {
        TimeFreqError::Cwt(e) => cwt_err(e),
        TimeFreqError::Backend(e) => backend_err(e),
        e => value_err(e),
    }
}

fn wavelet(name: &str) -> PyResult<Wavelet> {
    Wavelet::from_name(name).map_err(value_err)
}

fn band(b: Option<(f64, f64)>) -> PyResult<Option<(f64, f64)>> {
    if let Some((lo, hi)) = b {
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(value_err(format!("band ({lo}, {hi}) must be finite")));
        }
    }
    Ok(b)
}

/// K+, K-, C_psi and the DC leak of a wavelet.
#[pyfunction]
fn admissibility<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let w = wavelet(name)?;
    let a = crate::run(py, || w.admissibility());
    let d = PyDict::new(py);
    let c = |z: Complex64| pyo3::types::PyComplex::from_doubles(py, z.re, z.im);
    d.set_item("positive", c(a.positive))?;
    d.set_item("negative", c(a.negative))?;
    d.set_item("calderon", a.calderon)?;
    d.set_item("dc_leak", a.dc_leak)?;
    d.set_item("analytic", a.is_analytic())?;
    Ok(d)
}

/// The signal of one (scales, N) plane of coefficients.
#[pyfunction]
#[pyo3(signature = (w, scales, name, normalization, band=None, mean=0.0, real=true))]
#[allow(clippy::too_many_arguments)]
fn icwt<'py>(
    py: Python<'py>,
    w: PyReadonlyArray2<'py, Complex64>,
    scales: Vec<f64>,
    name: &str,
    normalization: &str,
    band: Option<(f64, f64)>,
    mean: f64,
    real: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let wv = wavelet(name)?;
    let o = IcwtOptions {
        normalization: parse(normalization)?,
        band: self::band(band)?,
        mean,
        real,
    };
    let view = w.as_array();
    let x = crate::run(py, || timefreq::icwt(view, &scales, &wv, &o)).map_err(tf_err)?;
    Ok(if real {
        x.iter()
            .map(|c| c.re)
            .collect::<Vec<f64>>()
            .into_pyarray(py)
            .into_any()
    } else {
        x.into_pyarray(py).into_any()
    })
}

/// ssq_cwt of one real or complex signal: (Tx, Wx, freqs, dWx).
#[pyfunction]
#[pyo3(signature = (x, scales, name, fs, boundary, precision, device, squeezing, spacing, maprange, freqs, gamma, flipud))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn ssq_cwt<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, Complex64>,
    scales: Vec<f64>,
    name: &str,
    fs: f64,
    boundary: &str,
    precision: &str,
    device: &str,
    squeezing: &str,
    spacing: Option<&str>,
    maprange: Option<(f64, f64)>,
    freqs: Option<Vec<f64>>,
    gamma: Option<f64>,
    flipud: bool,
) -> PyResult<(
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
)> {
    let wv = wavelet(name)?;
    if !(fs.is_finite() && fs > 0.0) {
        return Err(value_err(format!(
            "fs must be finite and positive, got {fs}"
        )));
    }
    crate::cwt::check_scales(&scales)?;
    let mut o = CwtOptions::new(wv, scales.iter().map(|&s| Scale::new(s)).collect());
    o.boundary = parse(boundary)?;
    o.precision = parse(precision)?;
    o.sample_rate = Some(fs);
    let ssq = SsqOptions {
        squeezing: parse(squeezing)?,
        spacing: spacing.map(parse).transpose()?,
        maprange: match maprange {
            Some((a, b)) => MapRange::Range(a, b),
            None => MapRange::Peak,
        },
        freqs,
        gamma,
        flipud,
    };
    let v = x.as_array();
    let signal = if v.iter().all(|c| c.im == 0.0) {
        Signal::real(v.iter().map(|c| c.re).collect())
    } else {
        Signal::complex(v.to_vec())
    };
    let (be, _) = backend(device)?;
    // float32 planes stay float32 (complex64, as ssqueezepy returns them):
    // half the memory of widening them.
    macro_rules! planes {
        ($t:ty) => {{
            let s = crate::run(py, || {
                timefreq::ssq_cwt_in::<$t>(be.as_ref(), &signal, &o, &ssq)
            })
            .map_err(tf_err)?;
            Ok((
                s.tx.into_pyarray(py).into_any(),
                s.wx.into_pyarray(py).into_any(),
                s.freqs.into_pyarray(py).into_any(),
                s.dwx.into_pyarray(py).into_any(),
            ))
        }};
    }
    match o.precision {
        multires::cwt::Precision::F32 => planes!(f32),
        multires::cwt::Precision::F64 => planes!(f64),
    }
}

/// The output frequencies ssq_cwt would use ('peak' or 'maximal' range).
#[pyfunction]
fn ssq_frequencies(
    scales: Vec<f64>,
    n: usize,
    name: &str,
    spacing: &str,
    maprange: &str,
    fs: f64,
) -> PyResult<Vec<f64>> {
    let wv = wavelet(name)?;
    let m = match maprange {
        "peak" => MapRange::Peak,
        "maximal" => MapRange::Maximal,
        other => {
            return Err(value_err(format!(
                "maprange '{other}': expected 'peak', 'maximal' or a (fmin, fmax) pair"
            )))
        }
    };
    timefreq::ssq_frequencies(&scales, n, &wv, parse(spacing)?, m, fs).map_err(tf_err)
}

/// The signal of a synchrosqueezed plane.
#[pyfunction]
#[pyo3(signature = (tx, freqs, name, band=None, mean=0.0))]
fn issq_cwt<'py>(
    py: Python<'py>,
    tx: PyReadonlyArray2<'py, Complex64>,
    freqs: Vec<f64>,
    name: &str,
    band: Option<(f64, f64)>,
    mean: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let wv = wavelet(name)?;
    let band = self::band(band)?;
    let view = tx.as_array();
    let x = crate::run(py, || timefreq::issq_cwt(view, &freqs, &wv, band, mean)).map_err(tf_err)?;
    Ok(x.into_pyarray(py).into_any())
}

/// Ridges of an energy plane: (indices (T, n), axis values, energies).
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn extract_ridges<'py>(
    py: Python<'py>,
    energy: PyReadonlyArray2<'py, f64>,
    axis: Vec<f64>,
    log_axis: bool,
    penalty: f64,
    n_ridges: usize,
    bw: usize,
    eps: f64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let view = energy.as_array();
    let r = crate::run(py, || {
        timefreq::extract_ridges(view, &axis, log_axis, penalty, n_ridges, bw, eps)
    })
    .map_err(tf_err)?;
    Ok((
        r.indices.mapv(|v| v as i64).into_pyarray(py).into_any(),
        r.values.into_pyarray(py).into_any(),
        r.energy.into_pyarray(py).into_any(),
    ))
}

/// pycwt's wavelet coherence of two planes: (WCT, phase, cross spectrum).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn wavelet_coherence<'py>(
    py: Python<'py>,
    w1: PyReadonlyArray2<'py, Complex64>,
    w2: PyReadonlyArray2<'py, Complex64>,
    scales: Vec<f64>,
    dj: f64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let (a, b) = (w1.as_array(), w2.as_array());
    let c = crate::run(py, || timefreq::wavelet_coherence(a, b, &scales, dj)).map_err(tf_err)?;
    Ok((
        c.wct.into_pyarray(py).into_any(),
        c.phase.into_pyarray(py).into_any(),
        c.cross.into_pyarray(py).into_any(),
    ))
}

/// pycwt's `wct`/`xwt` of two series: (WCT, phase, W12, scales, freqs, coi).
#[pyfunction]
#[pyo3(signature = (y1, y2, dt, dj, s0, j, normalize, boundary, device, coherence=true))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn morlet_coherence<'py>(
    py: Python<'py>,
    y1: Vec<f64>,
    y2: Vec<f64>,
    dt: f64,
    dj: f64,
    s0: Option<f64>,
    j: Option<usize>,
    normalize: bool,
    boundary: &str,
    device: &str,
    coherence: bool,
) -> PyResult<(
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
)> {
    let o = timefreq::MorletCoherenceOptions {
        dt,
        dj,
        s0,
        j,
        normalize,
        boundary: parse(boundary)?,
    };
    let (be, _) = backend(device)?;
    if !coherence {
        // The cross spectrum alone (xwt): no smoothing.
        let (w1, w2, scales, freqs, coi) = crate::run(py, || {
            timefreq::morlet_transforms(be.as_ref(), &y1, &y2, &o)
        })
        .map_err(tf_err)?;
        let cross = ndarray::Zip::from(&w1)
            .and(&w2)
            .map_collect(|a, b| a * b.conj());
        let empty = ndarray::Array2::<f64>::zeros((0, 0));
        return Ok((
            empty.clone().into_pyarray(py).into_any(),
            empty.into_pyarray(py).into_any(),
            cross.into_pyarray(py).into_any(),
            scales,
            freqs,
            coi,
        ));
    }
    let c =
        crate::run(py, || timefreq::morlet_coherence(be.as_ref(), &y1, &y2, &o)).map_err(tf_err)?;
    Ok((
        c.coherence.wct.into_pyarray(py).into_any(),
        c.coherence.phase.into_pyarray(py).into_any(),
        c.coherence.cross.into_pyarray(py).into_any(),
        c.scales,
        c.freqs,
        c.coi,
    ))
}

/// pycwt's Morlet smoothing of one plane.
#[pyfunction]
fn smooth<'py>(
    py: Python<'py>,
    w: PyReadonlyArray2<'py, Complex64>,
    scales: Vec<f64>,
    dj: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let a = w.as_array();
    let s = crate::run(py, || timefreq::smooth(a, &scales, dj)).map_err(tf_err)?;
    Ok(s.into_pyarray(py).into_any())
}

/// Allen & Smith's AR(1) estimate: (g, a, mu2), pycwt's `ar1`.
#[pyfunction]
fn ar1(x: Vec<f64>) -> PyResult<(f64, f64, f64)> {
    timefreq::ar1(&x).map_err(tf_err)
}

/// Red-noise significance levels and the AR(1) spectrum per scale.
#[pyfunction]
#[pyo3(signature = (variance, alpha, periods, scales, dt, level, dof=None, band=None))]
#[allow(clippy::too_many_arguments)]
fn red_noise_significance(
    variance: f64,
    alpha: f64,
    periods: Vec<f64>,
    scales: Vec<f64>,
    dt: f64,
    level: f64,
    dof: Option<Vec<f64>>,
    band: Option<(f64, f64, f64)>,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let test = match (dof, band) {
        (_, Some((s1, s2, dj))) => timefreq::SigmaTest::ScaleAveraged { s1, s2, dj },
        (None, None) => timefreq::SigmaTest::Power,
        (Some(d), None) => timefreq::SigmaTest::TimeAveraged(d),
    };
    timefreq::red_noise_significance(variance, alpha, &periods, &scales, dt, level, &test)
        .map_err(tf_err)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(admissibility, m)?)?;
    m.add_function(wrap_pyfunction!(icwt, m)?)?;
    m.add_function(wrap_pyfunction!(ssq_cwt, m)?)?;
    m.add_function(wrap_pyfunction!(ssq_frequencies, m)?)?;
    m.add_function(wrap_pyfunction!(issq_cwt, m)?)?;
    m.add_function(wrap_pyfunction!(extract_ridges, m)?)?;
    m.add_function(wrap_pyfunction!(wavelet_coherence, m)?)?;
    m.add_function(wrap_pyfunction!(smooth, m)?)?;
    m.add_function(wrap_pyfunction!(morlet_coherence, m)?)?;
    m.add_function(wrap_pyfunction!(ar1, m)?)?;
    m.add_function(wrap_pyfunction!(red_noise_significance, m)?)?;
    Ok(())
}
