//! `multires swt`, `iswt`, `modwt`: the undecimated transforms of a signal
//! (or of every row along --axis). swt's .npz holds cA{j}/cD{j} by level
//! (pywt.swt's arrays, coarsest first); modwt's .npy is MATLAB's
//! (level + 1, N) array, details W_1 ... W_J then the smooth V_J.
use crate::cmd_dwt::{axis_back, axis_last, read_finite};
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::dwt::{self, DiscreteWavelet};
use multires::io;
use ndarray::ArrayD;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct SwtArgs {
    /// Input: .npy (any shape; the transform runs along --axis), .wav, .csv/.txt.
    pub input: PathBuf,
    /// Output .npz: cA{j} and cD{j} for each level j (cA only at the
    /// coarsest level with --trim-approx), every array of the input's shape.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Discrete wavelet (PyWavelets' names).
    #[arg(long, short)]
    pub wavelet: String,
    /// Levels (default: swt_max_level, how often the length halves evenly).
    #[arg(long)]
    pub level: Option<usize>,
    /// The first level to compute (pywt's start_level).
    #[arg(long, default_value_t = 0)]
    pub start_level: usize,
    /// Axis of the input array to transform.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub axis: isize,
    /// Keep only the coarsest approximation (pywt's trim_approx).
    #[arg(long)]
    pub trim_approx: bool,
    /// Filters scaled by 1/sqrt(2): an orthogonal wavelet's energy is kept (pywt's norm).
    #[arg(long)]
    pub norm: bool,
}

#[derive(Args)]
pub struct IswtArgs {
    /// Coefficients .npz with cA{n}, cD{n} ... cD1 (as `multires swt` writes, from level 0).
    pub input: PathBuf,
    /// Output .npy.
    #[arg(short, long)]
    pub output: PathBuf,
    #[arg(long, short)]
    pub wavelet: String,
    /// Axis the coefficients were computed along.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub axis: isize,
    /// The --norm the coefficients were computed with.
    #[arg(long)]
    pub norm: bool,
}

#[derive(Args)]
pub struct ModwtArgs {
    /// Input: .npy (any shape; the transform runs along --axis), .wav, .csv/.txt.
    pub input: PathBuf,
    /// Output .npy of shape (level + 1, ..., N): W_1 ... W_level, then V_level.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Orthogonal wavelet (MATLAB's default sym4).
    #[arg(long, short, default_value = "sym4")]
    pub wavelet: String,
    /// Levels (default: floor(log2 N), the deepest).
    #[arg(long)]
    pub level: Option<usize>,
    /// Axis of the input array to transform (it comes last in the output).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub axis: isize,
    /// Write the multiresolution analysis instead (MATLAB's modwtmra: D_1 ... D_J, S_J, summing to the signal).
    #[arg(long)]
    pub mra: bool,
    /// Also draw the planes, one row per level, to this PNG (1-D input).
    #[arg(long, value_name = "PNG")]
    pub plot: Option<PathBuf>,
}

/// The input as rows along an axis.
struct Rows {
    values: Vec<f64>,
    /// The other axes' lengths, in the rows' order.
    outer: Vec<usize>,
    /// The permutation that moved the axis last.
    perm: Vec<usize>,
    n: usize,
    shape: Vec<usize>,
}

fn read_rows(path: &std::path::Path, axis: isize) -> Result<Rows> {
    let x = read_finite(path, "the transform needs finite samples")?;
    let ax = dwt::nd::axis_index(axis, x.values.ndim())?;
    let (rows, perm, n) = axis_last(&x.values, ax);
    let outer: Vec<usize> = perm[..perm.len() - 1]
        .iter()
        .map(|&i| x.values.shape()[i])
        .collect();
    Ok(Rows {
        values: rows,
        outer,
        perm,
        n,
        shape: x.values.shape().to_vec(),
    })
}

pub fn swt(a: SwtArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npz"])],
    )?;
    let t0 = Instant::now();
    let w = DiscreteWavelet::from_name(&a.wavelet)?;
    let Rows {
        values: rows,
        outer,
        perm,
        n,
        shape,
    } = read_rows(&a.input, a.axis)?;
    let max = dwt::swt::swt_max_level(n);
    let level = a.level.unwrap_or(max.saturating_sub(a.start_level));
    let levels = dwt::swt::swt(&rows, n, &w, level, a.start_level, a.norm)?;
    let mut named: Vec<(String, ArrayD<f64>)> = Vec::new();
    for (i, (ca, cd)) in levels.into_iter().enumerate() {
        let j = a.start_level + level - i;
        if !a.trim_approx || i == 0 {
            named.push((format!("cA{j}"), axis_back(ca, &outer, n, &perm)?));
        }
        named.push((format!("cD{j}"), axis_back(cd, &outer, n, &perm)?));
    }
    let views: Vec<(String, ndarray::ArrayViewD<f64>)> =
        named.iter().map(|(k, v)| (k.clone(), v.view())).collect();
    io::write_npz(&a.output, &views)?;
    eprintln!(
        "swt: {shape:?} along axis {}, levels {}..{}, wavelet {}{} -> {} in {:.3} s",
        a.axis,
        a.start_level + 1,
        a.start_level + level,
        a.wavelet,
        if a.norm { ", norm" } else { "" },
        a.output.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

pub fn iswt(a: IswtArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    let w = DiscreteWavelet::from_name(&a.wavelet)?;
    let (arrays, _) = io::read_npz(&a.input)?;
    let mut by: std::collections::BTreeMap<(char, usize), ArrayD<f64>> = Default::default();
    for (k, v) in arrays {
        let kind = k.chars().nth(1).filter(|_| k.starts_with('c'));
        let level = k.get(2..).and_then(|s| s.parse::<usize>().ok());
        match (kind, level) {
            (Some(c @ ('A' | 'D')), Some(j)) if j >= 1 => {
                by.insert((c, j), v);
            }
            _ => bail!("'{}': unexpected array '{k}'; expected cA{{j}} and cD{{j}} (as `multires swt` writes)", a.input.display()),
        }
    }
    let top = by
        .keys()
        .filter(|(c, _)| *c == 'D')
        .map(|&(_, j)| j)
        .max()
        .context("no cD arrays in the file")?;
    if (1..=top).any(|j| !by.contains_key(&('D', j))) {
        bail!(
            "'{}': cD1 ... cD{top} must all be present (the inverse runs from level 0)",
            a.input.display()
        );
    }
    let approx = by.get(&('A', top)).with_context(|| {
        format!(
            "'{}': cA{top} (the coarsest approximation) is missing",
            a.input.display()
        )
    })?;
    let ax = dwt::nd::axis_index(a.axis, approx.ndim())?;
    let (ra, perm, n) = axis_last(approx, ax);
    let outer: Vec<usize> = perm[..perm.len() - 1]
        .iter()
        .map(|&i| approx.shape()[i])
        .collect();
    let mut details = Vec::with_capacity(top);
    for j in (1..=top).rev() {
        let d = &by[&('D', j)];
        if d.shape() != approx.shape() {
            bail!(
                "cD{j} has shape {:?}, cA{top} {:?}: they must match",
                d.shape(),
                approx.shape()
            );
        }
        details.push(axis_last(d, ax).0);
    }
    let x = dwt::swt::iswt(&ra, &details, n, &w, a.norm)?;
    io::write_npy(&a.output, &axis_back(x, &outer, n, &perm)?)?;
    eprintln!(
        "iswt: {top} levels, wavelet {} -> {}",
        a.wavelet,
        a.output.display()
    );
    Ok(())
}

pub fn modwt(a: ModwtArgs) -> Result<()> {
    let mut outputs = vec![crate::paths::Output::new(&a.output, "-o", &["npy"])];
    if let Some(p) = &a.plot {
        outputs.push(crate::paths::Output::new(p, "--plot", &["png"]));
    }
    crate::paths::check(&[&a.input], &outputs)?;
    let t0 = Instant::now();
    let w = DiscreteWavelet::from_name(&a.wavelet)?;
    let Rows {
        values: rows,
        outer,
        n,
        shape,
        ..
    } = read_rows(&a.input, a.axis)?;
    if a.plot.is_some() && shape.len() != 1 {
        bail!("--plot draws 1-D transforms; the input has shape {shape:?}");
    }
    let level = a.level.unwrap_or(dwt::modwt::modwt_max_level(n));
    let mut planes = dwt::modwt::modwt(&rows, n, &w, level)?;
    if a.mra {
        planes = dwt::modwt::modwtmra(&planes, n, &w)?;
    }
    let mut out_shape = vec![level + 1];
    out_shape.extend_from_slice(&outer);
    out_shape.push(n);
    let rows_plot: Vec<(String, Vec<f64>)> = planes
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let name = match (j == level, a.mra) {
                (true, true) => format!("S{level}"),
                (true, false) => format!("V{level}"),
                (false, true) => format!("D{}", j + 1),
                (false, false) => format!("W{}", j + 1),
            };
            (name, p.clone())
        })
        .collect();
    let arr = ArrayD::from_shape_vec(ndarray::IxDyn(&out_shape), planes.concat())?;
    io::write_npy(&a.output, &arr)?;
    if let Some(png) = &a.plot {
        let what = if a.mra { "modwtmra" } else { "modwt" };
        let title = format!("{what}: {}, {level} levels", a.wavelet);
        if let Err(e) = multires::plot::dwt_levels_png(&rows_plot, n, png, &title) {
            let _ = std::fs::remove_file(&a.output);
            return Err(e.into());
        }
    }
    eprintln!(
        "{}: {shape:?} along axis {}, {level} levels, wavelet {} -> {} {:?} in {:.3} s",
        if a.mra { "modwtmra" } else { "modwt" },
        a.axis,
        a.wavelet,
        a.output.display(),
        out_shape,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
