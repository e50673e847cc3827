//! Convergence figures from the manifest's `[[plots]]`, with the paper's values as markers.

use super::plot::ticks::trim_zeros;
use super::plot::{render, render_bars, BarPlot, LinePlot, Marker, Series};
use super::tables::paper_for;
use crate::manifest::{fmt_value, label_names, Experiment, PlotKind, PlotSpec, XAxis, YMetric};
use crate::run::{describe, RunRecord, TraceRow};
use anyhow::Result;
use std::path::{Path, PathBuf};

fn x_of(axis: XAxis, t: &TraceRow) -> f64 {
    match axis {
        XAxis::Rounds => t.round as f64,
        XAxis::Seconds => t.time_s,
        XAxis::Vectors => t.vectors as f64,
        XAxis::Bytes => (t.bytes_up + t.bytes_down) as f64,
    }
}

fn y_of(metric: YMetric, t: &TraceRow) -> f64 {
    match metric {
        YMetric::Kkt => t.kkt,
        YMetric::SvErr => t.sv_err,
        YMetric::SubspaceDist => t.subspace_dist,
        YMetric::Objective => t.objective,
        YMetric::LeakErr => t.leak_err.unwrap_or(f64::NAN),
    }
}

pub fn x_label(axis: XAxis) -> &'static str {
    match axis {
        XAxis::Rounds => "communication rounds",
        XAxis::Seconds => "wall-clock of the method (s)",
        XAxis::Vectors => "n-vectors sent (up + down)",
        XAxis::Bytes => "bytes sent (up + down)",
    }
}

pub fn y_label(metric: YMetric) -> &'static str {
    match metric {
        YMetric::Kkt => "scaled KKT violation ‖(I−ZZᵀ)AAᵀZ‖_F / ‖A‖²_F",
        YMetric::SvErr => "relative singular-value error",
        YMetric::SubspaceDist => "subspace distance ‖sin Θ‖_F",
        YMetric::Objective => "objective ‖AᵀZ‖²_F",
        YMetric::LeakErr => "attack error ‖Φ − A₁A₁ᵀ‖_F / ‖A₁A₁ᵀ‖_F",
    }
}

fn paper_value(exp: &Experiment, r: &RunRecord, spec: &PlotSpec) -> Option<Marker> {
    let p = paper_for(exp, &r.key)?;
    let y = match spec.y {
        YMetric::Kkt => p.kkt?,
        YMetric::SvErr => p.sv_err?,
        _ => return None,
    };
    let x = match spec.x {
        XAxis::Rounds => p.rounds? as f64,
        XAxis::Seconds => p.time_s?,
        _ => return None,
    };
    Some(Marker {
        label: format!("paper: {} ({x:.4}, {y:.2e})", r.key.label).replace(".0000,", ","),
        x,
        y,
    })
}

fn short(metric: YMetric) -> &'static str {
    match metric {
        YMetric::Kkt => "KKT",
        YMetric::SvErr => "sv error",
        YMetric::SubspaceDist => "sin Θ",
        YMetric::Objective => "objective",
        YMetric::LeakErr => "attack error",
    }
}

fn title(exp: &Experiment, spec: &PlotSpec) -> String {
    spec.title
        .clone()
        .unwrap_or_else(|| format!("{} [{} profile]", exp.title, exp.profile))
}

/// The metrics a plot draws: `y`, then `also`.
fn metrics(spec: &PlotSpec) -> Vec<YMetric> {
    std::iter::once(spec.y)
        .chain(spec.also.iter().copied())
        .collect()
}

fn label(exp: &Experiment, r: &RunRecord, metric: Option<YMetric>) -> String {
    let mut l = describe(&r.key);
    if exp.points.len() > 1 {
        l = format!("{l} {}", caption(exp, &r.key.point));
    }
    match metric {
        Some(m) => format!("{l} — {}", short(m)),
        None => l,
    }
}

fn line_plot(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
    let ms = metrics(spec);
    let many = ms.len() > 1;
    let series = ms
        .iter()
        .flat_map(|&m| {
            records.iter().map(move |r| Series {
                label: label(exp, r, many.then_some(m)),
                points: r
                    .trace
                    .iter()
                    .map(|t| (x_of(spec.x, t), y_of(m, t)))
                    .collect(),
            })
        })
        .collect();
    let mut markers: Vec<Marker> = Vec::new();
    for r in records {
        if let Some(mk) = paper_value(exp, r, spec) {
            if !markers.iter().any(|m| m.label == mk.label) {
                markers.push(mk);
            }
        }
    }
    LinePlot {
        title: title(exp, spec),
        x_label: x_label(spec.x).into(),
        y_label: if many {
            "value (log scale)".into()
        } else {
            y_label(spec.y).into()
        },
        log_y: spec.log_y,
        log_x: false,
        series,
        markers,
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

/// The first sweep coordinate of a point as a number (the x of a rounds-to-target plot).
fn coordinate(exp: &Experiment, point: &str) -> Option<f64> {
    let p = exp.points.iter().find(|p| p.label == point)?;
    match p.coords.first()?.1 {
        toml::Value::Integer(i) => Some(i as f64),
        toml::Value::Float(f) => Some(f),
        _ => None,
    }
}

fn rounds_to_target(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
    let target = spec
        .target
        .expect("validated: rounds_to_target has a target");
    let mut series: Vec<Series> = Vec::new();
    for m in metrics(spec) {
        for r in records {
            let name = format!("{} — {}", describe(&r.key), short(m));
            let x = coordinate(exp, &r.key.point).unwrap_or(f64::NAN);
            let y = r
                .first_round_below(|t| Some(y_of(m, t)).filter(|v| v.is_finite()), target)
                .map_or(f64::NAN, |k| k as f64);
            match series.iter_mut().find(|s| s.label == name) {
                Some(s) => s.points.push((x, y)),
                None => series.push(Series {
                    label: name,
                    points: vec![(x, y)],
                }),
            }
        }
    }
    let axis = exp
        .points
        .first()
        .and_then(|p| p.coords.first())
        .map_or("sweep point".into(), |c| c.0.clone());
    LinePlot {
        title: title(exp, spec),
        x_label: axis,
        y_label: format!("rounds until ≤ {target:e}"),
        log_y: spec.log_y,
        log_x: false,
        series,
        markers: Vec::new(),
    }
}

fn bars(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> BarPlot {
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    for r in records {
        let name = describe(&r.key);
        let i = exp
            .points
            .iter()
            .position(|p| p.label == r.key.point)
            .unwrap_or(0);
        let v = match spec.x {
            XAxis::Seconds => r.last().time_s,
            _ => r.rounds as f64,
        };
        if !groups.iter().any(|g| g.0 == name) {
            groups.push((name.clone(), vec![f64::NAN; exp.points.len()]));
        }
        let g = groups
            .iter_mut()
            .find(|g| g.0 == name)
            .expect("just inserted");
        g.1[i] = v;
    }
    BarPlot {
        title: title(exp, spec),
        x_label: exp
            .points
            .first()
            .and_then(|p| p.coords.first())
            .map_or("sweep point".into(), |c| c.0.clone()),
        y_label: match spec.x {
            XAxis::Seconds => "wall-clock of the method (s)".into(),
            _ => "communication rounds".into(),
        },
        log_y: spec.log_y,
        categories: exp.points.iter().map(|p| caption(exp, &p.label)).collect(),
        groups,
    }
}

/// Render every plot of the manifest into `dir`; returns the stems written.
pub fn render_all(exp: &Experiment, records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for spec in &exp.plots {
        let stem = dir.join(&spec.file);
        match spec.kind {
            PlotKind::Line => render(&line_plot(exp, records, spec), &stem)?,
            PlotKind::RoundsToTarget => render(&rounds_to_target(exp, records, spec), &stem)?,
            PlotKind::Bars => render_bars(&bars(exp, records, spec), &stem)?,
        }
        written.push(stem);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::caption;
    use crate::manifest;
    use std::path::Path;

    fn captions(file: &str) -> Vec<String> {
        let exp = manifest::load(Path::new(file), "paper").expect("committed manifest loads");
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
