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
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 1200,
            height: 640,
            title: "scalogram".into(),
            coi: true,
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
        let fs_known = out.frequencies.is_some();
        let t_scale = out.column_step;
        let fs = out
            .frequencies
            .as_ref()
            .and_then(|f| f.first().map(|&f0| f0 * out.scales[0]))
            .unwrap_or(1.0);
        let t_end = (cols as f64 * t_scale / if fs_known { fs } else { 1.0 }).max(1e-12);
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
        let ylabel = if fs_known {
            "frequency (Hz)"
        } else {
            "scale (samples)"
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
                    .label_style(("sans-serif", 14))
                    .draw()
                    .map_err(de)?;
                let area = chart.plotting_area();
                let (xr, yr) = area.get_pixel_range();
                for py in yr.clone() {
                    let fy = (py - yr.start) as f64 / ((yr.end - yr.start).max(1) as f64);
                    let y = $to_y(1.0 - fy);
                    let r = order[row_at(y)];
                    let scale = out.scales[r];
                    for px in xr.clone() {
                        let fx0 = (px - xr.start) as f64 / (xr.end - xr.start) as f64;
                        let fx1 = (px + 1 - xr.start) as f64 / (xr.end - xr.start) as f64;
                        let c0 = ((fx0 * cols as f64) as usize).min(cols - 1);
                        let c1 = ((fx1 * cols as f64).ceil() as usize).clamp(c0 + 1, cols);
                        // Max-pool the columns under this pixel so peaks survive.
                        let mut v = f64::NEG_INFINITY;
                        for c in c0..c1 {
                            v = v.max(mag[[r, c]]);
                        }
                        let t = ((v - vmin) / (vmax - vmin)).clamp(0.0, 1.0);
                        let col =
                            colorous::VIRIDIS.eval_continuous(if t.is_finite() { t } else { 0.0 });
                        let (mut cr, mut cg, mut cb) = (col.r, col.g, col.b);
                        if opts.coi && scale > out.coi[(c0 + c1) / 2] {
                            // Outside the cone of influence: wash out towards grey.
                            cr = ((cr as u16 + 2 * 200) / 3) as u8;
                            cg = ((cg as u16 + 2 * 200) / 3) as u8;
                            cb = ((cb as u16 + 2 * 200) / 3) as u8;
                        }
                        root.draw_pixel((px, py), &RGBColor(cr, cg, cb))
                            .map_err(de)?;
                    }
                }
            }};
        }
        let mut builder = ChartBuilder::on(&main);
        builder
            .caption(&opts.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(75);
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
        let label = match out.output {
            OutputKind::Power => "|W|²",
            OutputKind::Phase => "phase (rad)",
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
        let x_end = signal_len.max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
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
