//! Convergence figures from the manifest's `[[plots]]`, with the paper's values as markers.
//!
//! One file per plot kind ([`PlotKind`]): `line.rs`, `rounds_to_target.rs`, `bars.rs`,
//! `heatmap.rs`, `spectrum.rs`, `final_plot.rs`; this file holds what they share (metric names,
//! titles, sweep-point captions, curve keys and their styles) and [`render_all`].

mod bars;
mod final_plot;
mod heatmap;
mod line;
mod rounds_to_target;
mod spectrum;

use self::bars::bars;
use self::final_plot::final_plot;
use self::heatmap::heatmaps;
pub use self::line::{comm_vectors, x_label};
use self::line::{line_plot, small_multiples};
use self::rounds_to_target::rounds_to_target;
use self::spectrum::spectrum;
use super::looks;
use super::sweep_names::axis_name;
use crate::plot::style::{Curve, Style};
use crate::plot::ticks::trim_zeros;
use crate::plot::{render, render_bars, render_heatmap, Series};
use crate::run::{describe, RunRecord, TraceRow};
use crate::spec::{
    fmt_value, label_names, Experiment, PlotKind, PlotSpec, KKT_ABS, LEAK_ABS, LEAK_ERR,
};
use anyhow::Result;
use std::path::{Path, PathBuf};

fn y_of(metric: &str, t: &TraceRow) -> f64 {
    t.metric(metric).unwrap_or(f64::NAN)
}

pub fn y_label(exp: &Experiment, metric: &str) -> &'static str {
    match crate::problem::metric(exp.kind, metric) {
        Some(m) => m.label,
        None if metric == KKT_ABS => "KKT violation ‖(I−ZZᵀ)AAᵀZ‖_F (unscaled)",
        None if metric == LEAK_ABS => "attack error ‖Φ − A₁A₁ᵀ‖_F (unscaled)",
        None => "attack error ‖Φ − A₁A₁ᵀ‖_F / ‖A₁A₁ᵀ‖_F",
    }
}

fn short(exp: &Experiment, metric: &str) -> &'static str {
    match crate::problem::metric(exp.kind, metric) {
        Some(m) => m.short,
        None if metric == LEAK_ERR => "attack error",
        None if metric == KKT_ABS => "KKT (unscaled)",
        None if metric == LEAK_ABS => "attack error (unscaled)",
        None => "?",
    }
}

/// The plot's title, or the manifest's; a result of any profile but the paper's says which
/// (a quick figure must not pass for the paper's).
fn title(exp: &Experiment, spec: &PlotSpec) -> String {
    let t = spec.title.clone().unwrap_or_else(|| exp.title.clone());
    if exp.profile == "paper" {
        t
    } else {
        format!("{t} ({})", exp.profile)
    }
}

/// Index of a sweep point in the manifest's order.
fn point_index(exp: &Experiment, point: &str) -> usize {
    exp.points
        .iter()
        .position(|p| p.label == point)
        .unwrap_or(0)
}

/// What tells a curve apart (see [`crate::plot::style::assign`]), owned while a figure is built.
struct CurveKey {
    /// The curve's name without its sweep point, for a legend by factor.
    name: String,
    method: String,
    entry: String,
    variant: String,
    point: usize,
}

impl CurveKey {
    /// The curve of run `r`; `metric` when the figure draws several.
    fn of(exp: &Experiment, r: &RunRecord, metric: Option<&str>) -> Self {
        CurveKey {
            name: match metric {
                Some(m) => format!("{} — {}", describe(&r.key), short(exp, m)),
                None => describe(&r.key),
            },
            method: r.key.method.clone(),
            entry: match metric {
                Some(m) => format!("{} — {m}", r.key.label),
                None => r.key.label.clone(),
            },
            variant: r.key.params.clone(),
            point: point_index(exp, &r.key.point),
        }
    }
}

/// The style of each curve; `points` sweep points share the axes.
fn styles<'k>(keys: impl IntoIterator<Item = &'k CurveKey>, points: usize) -> Vec<Style> {
    let curves: Vec<Curve> = keys
        .into_iter()
        .map(|k| Curve {
            method: &k.method,
            entry: &k.entry,
            variant: &k.variant,
            point: k.point,
        })
        .collect();
    looks::assign(&curves, points)
}

/// `series` with the styles of `keys` (one key per series).
fn with_styles(mut series: Vec<Series>, keys: &[CurveKey], points: usize) -> Vec<Series> {
    for (s, st) in series.iter_mut().zip(styles(keys, points)) {
        s.style = Some(st);
    }
    series
}

/// The metrics a plot draws: `y`, then `also`.
fn metrics(spec: &PlotSpec) -> Vec<&str> {
    std::iter::once(spec.y.as_str())
        .chain(spec.also.iter().map(String::as_str))
        .collect()
}

fn label(exp: &Experiment, r: &RunRecord, metric: Option<&str>) -> String {
    let mut l = describe(&r.key);
    if exp.points.len() > 1 {
        l = format!("{l} {}", caption(exp, &r.key.point));
    }
    match metric {
        Some(m) => format!("{l} — {}", short(exp, m)),
        None => l,
    }
}

/// A sweep point's label for figures: float coordinates rounded to the fewest decimals that keep
/// each within 1% of its gap to the nearest other value of the sweep, so `xi=1.0316227766016839`
/// reads `xi=1.0316` and no two points look alike. Integers and strings are kept as they are.
fn caption(exp: &Experiment, point: &str) -> String {
    let Some(p) = exp.points.iter().find(|p| p.label == point) else {
        return point.to_string();
    };
    let keys: Vec<&String> = p.coords.iter().map(|c| &c.0).collect();
    label_names(&keys)
        .iter()
        .zip(&p.coords)
        .enumerate()
        .map(|(i, (name, (_, v)))| {
            let toml::Value::Float(f) = v else {
                return format!("{name}={}", fmt_value(v));
            };
            let gap = exp
                .points
                .iter()
                .filter_map(|q| q.coords.get(i)?.1.as_float())
                .map(|g| (g - f).abs())
                .filter(|d| *d > 0.0)
                .fold(f64::INFINITY, f64::min);
            // Rounding error ≤ 0.5·10⁻ᵈ must stay below gap/100.
            let d = if gap.is_finite() {
                (-(0.02 * gap).log10()).ceil().clamp(0.0, 15.0) as usize
            } else {
                3
            };
            format!("{name}={}", trim_zeros(&format!("{f:.d$}")))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The name of the first sweep key, as an axis title.
fn sweep_axis(exp: &Experiment) -> String {
    exp.points
        .first()
        .and_then(|p| p.coords.first())
        .map_or("sweep point".into(), |c| axis_name(&c.0, exp.kind))
}

/// `text` in lower-case ASCII letters and digits, anything else `_`, for file stems.
fn file_safe(text: &str) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    safe.trim_matches('_').to_string()
}

/// A file stem for one method's panel: `<file>_<label>` with the label made file-safe.
fn panel_stem(file: &str, method: &str) -> String {
    format!("{file}_{}", file_safe(method))
}

/// Render every plot of the manifest into `dir`; returns the stems written.
pub fn render_all(exp: &Experiment, records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for spec in &exp.plots {
        let stem = dir.join(&spec.file);
        match spec.kind {
            PlotKind::Line => {
                render(&line_plot(exp, records, spec), &stem)?;
                written.push(stem);
                written.extend(small_multiples(exp, records, spec, dir)?);
                continue;
            }
            PlotKind::RoundsToTarget => render(&rounds_to_target(exp, records, spec), &stem)?,
            PlotKind::Bars => render_bars(&bars(exp, records, spec), &stem)?,
            PlotKind::Spectrum => render(&spectrum(exp, records, spec), &stem)?,
            PlotKind::Final => render(&final_plot(exp, records, spec), &stem)?,
            PlotKind::Heatmap => {
                let maps = heatmaps(exp, records, spec);
                let single = maps.len() == 1;
                for (m, map) in maps {
                    let stem = if single {
                        stem.clone()
                    } else {
                        dir.join(panel_stem(&spec.file, &m))
                    };
                    render_heatmap(&map, &stem)?;
                    written.push(stem);
                }
                continue;
            }
        }
        written.push(stem);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::caption;
    use crate::plan;
    use std::path::Path;

    fn captions(file: &str) -> Vec<String> {
        let exp = plan::load(Path::new(file), "paper").expect("committed manifest loads");
        exp.points.iter().map(|p| caption(&exp, &p.label)).collect()
    }

    #[test]
    fn captions_round_floats_but_keep_points_apart() {
        // ξ = 1 + 10^(−(1+j)/2): the full labels carry 17 digits.
        assert_eq!(
            captions("experiments/faps/fig2_xi.toml"),
            ["xi=1.1", "xi=1.0316", "xi=1.01", "xi=1.0032"]
        );
        assert_eq!(
            captions("experiments/faps/fig2_m.toml"),
            ["m=160000", "m=192000", "m=224000", "m=256000"]
        );
    }
}
