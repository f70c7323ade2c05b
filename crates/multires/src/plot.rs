//! Scalogram plots: |W| on a perceptual colormap (viridis) with time and
//! frequency (or scale) axes, a colorbar, and the cone of influence shaded.

use crate::cwt::{CwtOutput, OutputKind};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    #[error("cannot draw the plot: {0}")]
    Draw(String),
    #[error("cannot write the plot '{path}': {why}")]
    Write { path: String, why: String },
}

#[derive(Debug, Clone)]
pub struct PlotOptions {
    pub width: u32,
    pub height: u32,
    pub title: String,
    /// Shade the cone of influence.
    pub coi: bool,
    /// Lines over the plane, each the row at every column (ridges).
    pub ridges: Vec<Vec<usize>>,
    /// The y axis' name, where rows are neither scales nor frequencies in
    /// Hz (a synchrosqueezed plane without a sampling rate).
    pub y_label: Option<String>,
    /// A fixed colour range (coherence: 0..1) instead of the data's.
    pub value_range: Option<(f64, f64)>,
    /// The colour bar's name instead of |W|.
    pub value_label: Option<String>,
    /// Phase arrows (radians, one per cell, shape of the plane), drawn on a
    /// coarse grid where the value is at least `arrow_min`: right is in
    /// phase, up is the first series leading by a quarter period.
    pub arrows: Option<ndarray::Array2<f64>>,
    pub arrow_min: f64,
    /// A level per row: a black line is drawn where the plane crosses it
    /// (coherence's significance contour, as pycwt's and MATLAB's plots).
    pub contour: Option<Vec<f64>>,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 1200,
            height: 640,
            title: "scalogram".into(),
            coi: true,
            ridges: Vec::new(),
            y_label: None,
            value_range: None,
            value_label: None,
            arrows: None,
            contour: None,
            arrow_min: 0.5,
        }
    }
}

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Bundled DejaVu Sans: no system fonts needed.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Where a value is NaN the plot shows this colour (magenta, outside
/// viridis), so a NaN is not mistaken for a small value.
const NAN_RGB: (u8, u8, u8) = (230, 0, 180);

/// Ridge lines: red, white, orange, cyan (apart from viridis' blues to yellows).
const RIDGE_RGB: [(u8, u8, u8); 4] = [(230, 30, 30), (255, 255, 255), (255, 150, 0), (0, 230, 230)];

/// A tick label that reads at any magnitude: plain with up to four
/// significant digits between 1e-3 and 1e5, scientific notation outside,
/// and no float noise (0.30000000000000004 prints as 0.3).
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v == 0.0 {
            "0".into()
        } else {
            format!("{v}")
        };
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        // 1.50e3 -> 1.5e3, 1.00e-9 -> 1e-9
        return match s.split_once('e') {
            Some((m, e)) => {
                let m = m.trim_end_matches('0').trim_end_matches('.');
                format!("{m}e{e}")
            }
            None => s,
        };
    }
    let digits = (3 - a.log10().floor() as i32).clamp(0, 7) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn de<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Draws `out` into a PNG at `path` (written atomically).
pub fn scalogram_png(out: &CwtOutput, path: &Path, opts: &PlotOptions) -> Result<(), PlotError> {
    register_fonts();
    let (rows, cols) = out.values.shape();
    let (w, h) = (opts.width.max(300), opts.height.max(200));
    let mut pixels = vec![0u8; (w * h * 3) as usize];
    let mag = out.values.magnitude();
    let phase = out.output == OutputKind::Phase;
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        let (main, bar) = root.split_horizontally(w - 130);
        // Time comes from the sampling rate alone (the frequencies also
        // carry the wavelet's centre frequency, which is not a time unit).
        let fs = out.sample_rate.filter(|f| f.is_finite() && *f > 0.0);
        let fs_known = fs.is_some() && out.frequencies.is_some();
        let t_end = (cols as f64 * out.column_step / fs.unwrap_or(1.0)).max(1e-12);
        // Rows ordered as given; the y axis shows row values (frequency or scale).
        let yvals: Vec<f64> = match &out.frequencies {
            Some(f) => f.clone(),
            None => out.scales.clone(),
        };
        let (ymin, ymax) = yvals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let (ymin, ymax) = if ymax > ymin {
            (ymin, ymax)
        } else {
            (ymin * 0.9, ymin * 1.1 + 1e-12)
        };
        let log_y = ymin > 0.0 && ymax / ymin > 30.0;
        let xlabel = if fs_known {
            "time (s)"
        } else {
            "time (samples)"
        };
        let ylabel = match &opts.y_label {
            Some(l) => l.as_str(),
            None if fs_known => "frequency (Hz)",
            None => "scale (samples)",
        };
        let mut vmin = f64::INFINITY;
        let mut vmax = f64::NEG_INFINITY;
        for &v in mag.iter() {
            if v.is_finite() {
                vmin = vmin.min(v);
                vmax = vmax.max(v);
            }
        }
        if !vmin.is_finite() {
            vmin = 0.0;
            vmax = 1.0;
        }
        if !phase {
            vmin = vmin.min(0.0);
        }
        if vmax <= vmin {
            vmax = vmin + 1.0;
        }
        if let Some((a, b)) = opts.value_range.filter(|(a, b)| b > a) {
            (vmin, vmax) = (a, b);
        }
        // Row index for a y value: nearest row in value order.
        let mut order: Vec<usize> = (0..rows).collect();
        order.sort_by(|&a, &b| yvals[a].total_cmp(&yvals[b]));
        let row_at = |y: f64| -> usize {
            let p = order.partition_point(|&i| yvals[i] < y);
            let c = [p.saturating_sub(1), p.min(rows - 1)];
            *c.iter()
                .min_by(|&&a, &&b| {
                    (yvals[order[a]] - y)
                        .abs()
                        .total_cmp(&(yvals[order[b]] - y).abs())
                })
                .unwrap_or(&0)
        };
        macro_rules! draw {
            ($chart:expr, $to_y:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .disable_mesh()
                    .x_desc(xlabel)
                    .y_desc(ylabel)
                    .x_labels(10)
                    .y_labels(12)
                    .x_label_formatter(&|v: &f64| tick_label(*v))
                    .y_label_formatter(&|v: &f64| tick_label(*v))
                    .label_style(("sans-serif", 14))
                    .draw()
                    .map_err(de)?;
                let area = chart.plotting_area();
                let (xr, yr) = area.get_pixel_range();
                let levels = opts.contour.as_ref().filter(|l| l.len() == rows);
                // Whether each pixel of the row above lay at or above its level.
                let mut above: Vec<Option<bool>> = vec![None; (xr.end - xr.start).max(0) as usize];
                for py in yr.clone() {
                    let fy = (py - yr.start) as f64 / ((yr.end - yr.start).max(1) as f64);
                    let y = $to_y(1.0 - fy);
                    let r = order[row_at(y)];
                    let scale = out.scales[r];
                    let mut left: Option<bool> = None;
                    for px in xr.clone() {
                        let fx0 = (px - xr.start) as f64 / (xr.end - xr.start) as f64;
                        let fx1 = (px + 1 - xr.start) as f64 / (xr.end - xr.start) as f64;
                        let c0 = ((fx0 * cols as f64) as usize).min(cols - 1);
                        let c1 = ((fx1 * cols as f64).ceil() as usize).clamp(c0 + 1, cols);
                        // Max-pool the columns under this pixel so peaks survive;
                        // a NaN among them is drawn as NaN, not as a value.
                        let mut v = f64::NEG_INFINITY;
                        let mut nan = false;
                        for c in c0..c1 {
                            let m = mag[[r, c]];
                            nan |= m.is_nan();
                            v = v.max(m);
                        }
                        let t = ((v - vmin) / (vmax - vmin)).clamp(0.0, 1.0);
                        let col =
                            colorous::VIRIDIS.eval_continuous(if t.is_finite() { t } else { 0.0 });
                        let (mut cr, mut cg, mut cb) =
                            if nan { NAN_RGB } else { (col.r, col.g, col.b) };
                        if opts.coi && scale > out.coi[(c0 + c1) / 2] {
                            // Outside the cone of influence: wash out towards grey.
                            cr = ((cr as u16 + 2 * 200) / 3) as u8;
                            cg = ((cg as u16 + 2 * 200) / 3) as u8;
                            cb = ((cb as u16 + 2 * 200) / 3) as u8;
                        }
                        // The contour: where this pixel and its left or upper
                        // neighbour lie on different sides of the level.
                        let on = levels.and_then(|l| l[r].is_finite().then(|| v >= l[r]));
                        let k = (px - xr.start) as usize;
                        let edge = on.is_some()
                            && ((left.is_some() && left != on)
                                || (above[k].is_some() && above[k] != on));
                        (left, above[k]) = (on, on);
                        if edge {
                            (cr, cg, cb) = (0, 0, 0);
                        }
                        root.draw_pixel((px, py), &RGBColor(cr, cg, cb))
                            .map_err(de)?;
                    }
                }
                if let Some(ph) = opts.arrows.as_ref().filter(|a| a.dim() == (rows, cols)) {
                    let dt = out.column_step / fs.unwrap_or(1.0);
                    let (gx, gy) = (36usize.min(cols), 14usize.min(rows));
                    for a in 0..gx {
                        let c = (a * cols + cols / 2) / gx;
                        for b in 0..gy {
                            let r = order[(b * rows + rows / 2) / gy];
                            let v = mag[[r, c]];
                            if v.is_nan() || v < opts.arrow_min || !ph[[r, c]].is_finite() {
                                continue;
                            }
                            let (px, py) = chart.backend_coord(&((c as f64 + 0.5) * dt, yvals[r]));
                            let (len, th) = (11.0, ph[[r, c]]);
                            let tip = (px + (len * th.cos()) as i32, py - (len * th.sin()) as i32);
                            let tail = (
                                px - (len * th.cos()) as i32 / 2,
                                py + (len * th.sin()) as i32 / 2,
                            );
                            let head = |d: f64| {
                                (
                                    tip.0 - (6.0 * (th + d).cos()) as i32,
                                    tip.1 + (6.0 * (th + d).sin()) as i32,
                                )
                            };
                            let style = ShapeStyle::from(&BLACK).stroke_width(2);
                            for seg in [vec![tail, tip], vec![head(0.5), tip, head(-0.5)]] {
                                root.draw(&PathElement::new(seg, style)).map_err(de)?;
                            }
                        }
                    }
                }
                for (k, ridge) in opts.ridges.iter().enumerate() {
                    let dt = out.column_step / fs.unwrap_or(1.0);
                    let pts: Vec<(f64, f64)> = ridge
                        .iter()
                        .take(cols)
                        .enumerate()
                        .map(|(c, &r)| ((c as f64 + 0.5) * dt, yvals[r.min(rows - 1)]))
                        .collect();
                    let colour = RIDGE_RGB[k % RIDGE_RGB.len()];
                    chart
                        .draw_series(LineSeries::new(
                            pts,
                            RGBColor(colour.0, colour.1, colour.2).stroke_width(2),
                        ))
                        .map_err(de)?;
                }
            }};
        }
        let mut builder = ChartBuilder::on(&main);
        builder
            .caption(&opts.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(95);
        if log_y {
            let chart = builder
                .build_cartesian_2d(0.0..t_end, (ymin..ymax).log_scale())
                .map_err(de)?;
            let (l0, l1) = (ymin.ln(), ymax.ln());
            draw!(chart, |f: f64| (l0 + f * (l1 - l0)).exp());
        } else {
            let chart = builder
                .build_cartesian_2d(0.0..t_end, ymin..ymax)
                .map_err(de)?;
            draw!(chart, |f: f64| ymin + f * (ymax - ymin));
        }
        // Colorbar.
        let label = match (&opts.value_label, out.output) {
            (Some(l), _) => l.as_str(),
            (None, OutputKind::Power) => "|W|²",
            (None, OutputKind::Phase) => "phase (rad)",
            _ => "|W|",
        };
        let mut cb = ChartBuilder::on(&bar)
            .margin_top(44)
            .margin_bottom(57)
            .margin_right(10)
            .y_label_area_size(75)
            .build_cartesian_2d(0.0..1.0, vmin..vmax)
            .map_err(de)?;
        cb.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc(label)
            .y_labels(8)
            .y_label_formatter(&|v: &f64| tick_label(*v))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(de)?;
        let steps = 256;
        cb.draw_series((0..steps).map(|i| {
            let a = vmin + (vmax - vmin) * i as f64 / steps as f64;
            let b = vmin + (vmax - vmin) * (i + 1) as f64 / steps as f64;
            let c = colorous::VIRIDIS.eval_continuous(i as f64 / (steps - 1) as f64);
            Rectangle::new([(0.0, a), (1.0, b)], RGBColor(c.r, c.g, c.b).filled())
        }))
        .map_err(de)?;
        root.present().map_err(de)?;
    }
    write_png(path, &pixels, w, h)
}

fn write_png(path: &Path, rgb: &[u8], w: u32, h: u32) -> Result<(), PlotError> {
    crate::io::write_png(path, rgb, w, h, image::ColorType::Rgb8).map_err(|e| match e {
        crate::io::IoError::Write { path, why } => PlotError::Write { path, why },
        other => PlotError::Write {
            path: path.display().to_string(),
            why: other.to_string(),
        },
    })
}

/// A multilevel DWT at a glance: one row per coefficient array (the
/// approximation on top, then the details from coarsest to finest), each
/// drawn over the signal's time axis with |coefficient| on viridis, scaled
/// per row (details of different levels differ by orders of magnitude).
/// Rows longer than the plot are pooled by their largest magnitude.
pub fn dwt_levels_png(
    rows: &[(String, Vec<f64>)],
    signal_len: usize,
    path: &Path,
    title: &str,
) -> Result<(), PlotError> {
    register_fonts();
    let nrows = rows.len().max(1);
    let (w, h) = (1200u32, (110 + 44 * nrows as u32).min(1000));
    let mut pixels = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        let (main, bar) = root.split_horizontally(w - 120);
        colour_bar(
            &bar,
            0.0,
            1.0,
            "|coefficient| / row's largest",
            Ramp::Viridis,
            40,
            52,
        )?;
        let x_end = signal_len.max(1) as f64;
        let mut chart = ChartBuilder::on(&main)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_end, 0.0..nrows as f64)
            .map_err(de)?;
        let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time (samples)")
            .y_labels(2 * nrows + 2)
            .y_label_formatter(&|y: &f64| {
                // Row r is drawn in [nrows - r - 1, nrows - r); its name sits
                // on the tick at the band's lower edge, moved up half a band.
                let k = y.round();
                let r = nrows as isize - 1 - k as isize;
                if (y - k).abs() < 1e-6 && r >= 0 && (r as usize) < names.len() {
                    names[r as usize].clone()
                } else {
                    String::new()
                }
            })
            .y_label_offset(-(((h as i32 - 100) / nrows as i32) / 2))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(de)?;
        let bins = 1000usize;
        for (r, (_, v)) in rows.iter().enumerate() {
            if v.is_empty() {
                continue;
            }
            let nb = bins.min(v.len());
            let pooled: Vec<f64> = (0..nb)
                .map(|b| {
                    let (lo, hi) = (
                        b * v.len() / nb,
                        ((b + 1) * v.len() / nb).max(b * v.len() / nb + 1),
                    );
                    v[lo..hi].iter().fold(
                        0.0f64,
                        |m, x| if x.is_finite() { m.max(x.abs()) } else { m },
                    )
                })
                .collect();
            let top = pooled
                .iter()
                .fold(0.0f64, |m, &x| m.max(x))
                .max(f64::MIN_POSITIVE);
            let y0 = (nrows - r - 1) as f64;
            chart
                .draw_series(pooled.iter().enumerate().map(|(b, &m)| {
                    let c = colorous::VIRIDIS.eval_continuous((m / top).clamp(0.0, 1.0));
                    let x0 = b as f64 / nb as f64 * x_end;
                    let x1 = (b + 1) as f64 / nb as f64 * x_end;
                    Rectangle::new(
                        [(x0, y0 + 0.05), (x1, y0 + 0.95)],
                        RGBColor(c.r, c.g, c.b).filled(),
                    )
                }))
                .map_err(de)?;
        }
        root.present().map_err(de)?;
    }
    write_png(path, &pixels, w, h)
}

/// The colour ramps the plots use.
#[derive(Clone, Copy)]
enum Ramp {
    Viridis,
    Grey,
    /// Black through red to yellow: errors, 0 to the bound.
    Heat,
}

impl Ramp {
    fn rgb(self, t: f64) -> RGBColor {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        match self {
            Ramp::Viridis => {
                let c = colorous::VIRIDIS.eval_continuous(t);
                RGBColor(c.r, c.g, c.b)
            }
            Ramp::Grey => {
                let g = (t * 255.0).round() as u8;
                RGBColor(g, g, g)
            }
            Ramp::Heat => {
                let c = colorous::INFERNO.eval_continuous(t);
                RGBColor(c.r, c.g, c.b)
            }
        }
    }
}

/// A vertical colour bar from `lo` to `hi` with readable ticks and a label.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    label: &str,
    ramp: Ramp,
    top: u32,
    bottom: u32,
) -> Result<(), PlotError> {
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let mut cb = ChartBuilder::on(area)
        .margin_top(top)
        .margin_bottom(bottom)
        .margin_right(8)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .map_err(de)?;
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(label)
        .y_labels(6)
        .y_label_formatter(&|v: &f64| tick_label(*v))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(de)?;
    let steps = 128;
    cb.draw_series((0..steps).map(|i| {
        let a = lo + (hi - lo) * i as f64 / steps as f64;
        let b = lo + (hi - lo) * (i + 1) as f64 / steps as f64;
        Rectangle::new(
            [(0.0, a), (1.0, b)],
            ramp.rgb(i as f64 / (steps - 1) as f64).filled(),
        )
    }))
    .map_err(de)?;
    Ok(())
}

/// One panel of a field figure: a 2-D field (rows of `w`) on a ramp from
/// `lo` to `hi`.
struct Panel<'a> {
    title: &'a str,
    values: &'a [f64],
    ramp: Ramp,
    lo: f64,
    hi: f64,
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
    (h, w): (usize, usize),
) -> Result<(), PlotError> {
    let mut chart = ChartBuilder::on(area)
        .caption(p.title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..w as f64, h as f64..0.0)
        .map_err(de)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("x (pixels)")
        .y_desc("y (pixels)")
        .x_labels(5)
        .y_labels(5)
        .x_label_formatter(&|v: &f64| tick_label(*v))
        .y_label_formatter(&|v: &f64| tick_label(*v))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(de)?;
    let plot = chart.plotting_area();
    let (xr, yr) = plot.get_pixel_range();
    let (pw, ph) = (
        (xr.end - xr.start).max(1) as usize,
        (yr.end - yr.start).max(1) as usize,
    );
    let span = if p.hi > p.lo { p.hi - p.lo } else { 1.0 };
    for py in 0..ph {
        let y = (py * h / ph).min(h - 1);
        for px in 0..pw {
            let x = (px * w / pw).min(w - 1);
            let v = p.values[y * w + x];
            let c = if v.is_nan() {
                RGBColor(NAN_RGB.0, NAN_RGB.1, NAN_RGB.2)
            } else {
                p.ramp.rgb((v - p.lo) / span)
            };
            area.draw_pixel((xr.start + px as i32, yr.start + py as i32), &c)
                .map_err(de)?;
        }
    }
    Ok(())
}

/// The codec's figure (the seed's Figure 1): the original field, the
/// decoded one (both grey over the original's value range, with its
/// colour bar) and the absolute error from 0 to the bound (with its own
/// colour bar), each panel titled and with pixel axes.
pub fn before_after_png(
    original: &[f64],
    decoded: &[f64],
    (h, w): (usize, usize),
    bound: f64,
    path: &Path,
    title: &str,
) -> Result<(), PlotError> {
    register_fonts();
    if h == 0 || w == 0 || original.len() != h * w || decoded.len() != h * w {
        return Err(PlotError::Draw(format!(
            "a {h} x {w} figure needs {} values per panel",
            h * w
        )));
    }
    let (lo, hi) = original
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let error: Vec<f64> = original
        .iter()
        .zip(decoded)
        .map(|(a, b)| (a - b).abs())
        .collect();
    let bound = if bound > 0.0 {
        bound
    } else {
        f64::MIN_POSITIVE
    };
    // Each panel at most 480 pixels wide, keeping the field's aspect.
    let pw = 480u32;
    let ph = ((pw as f64 * h as f64 / w as f64).round() as u32).clamp(160, 900);
    let (fw, fh) = (3 * (pw + 64) + 2 * 110, ph + 110);
    let mut pixels = vec![0u8; (fw * fh * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (fw, fh)).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(de)?;
        let (panels, bars) = root.split_horizontally(3 * (pw + 64));
        let cells = panels.split_evenly((1, 3));
        let (grey_bar, err_bar) = bars.split_horizontally(110);
        let figures = [
            Panel {
                title: "original",
                values: original,
                ramp: Ramp::Grey,
                lo,
                hi,
            },
            Panel {
                title: "decoded",
                values: decoded,
                ramp: Ramp::Grey,
                lo,
                hi,
            },
            Panel {
                title: "|error| (0 to the bound)",
                values: &error,
                ramp: Ramp::Heat,
                lo: 0.0,
                hi: bound,
            },
        ];
        for (cell, p) in cells.iter().zip(&figures) {
            draw_panel(cell, p, (h, w))?;
        }
        colour_bar(&grey_bar, lo, hi, "value", Ramp::Grey, 36, 44)?;
        colour_bar(&err_bar, 0.0, bound, "|error|", Ramp::Heat, 36, 44)?;
        root.present().map_err(de)?;
    }
    write_png(path, &pixels, fw, fh)
}

#[cfg(test)]
mod tests {
    use super::tick_label;

    #[test]
    fn tick_labels_read_at_any_magnitude_without_float_noise() {
        assert_eq!(tick_label(0.30000000000000004), "0.3");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(1e-9), "1e-9");
        assert_eq!(tick_label(2.5e9), "2.5e9");
        assert_eq!(tick_label(1e300), "1e300");
        assert_eq!(tick_label(-3.75e-12), "-3.75e-12");
        assert_eq!(tick_label(12.5), "12.5");
        assert_eq!(tick_label(1000.0), "1000");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(66.0), "66");
    }
}
