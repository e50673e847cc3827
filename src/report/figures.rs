//! Convergence figures from the manifest's `[[plots]]`, with the paper's values as markers.

use super::plot::{render, LinePlot, Marker, Series};
use super::tables::paper_for;
use crate::manifest::{Experiment, PlotSpec, XAxis, YMetric};
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
    let p = paper_for(exp, &r.key.method, &r.key.label)?;
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

/// Render every plot of the manifest into `dir`; returns the stems written.
pub fn render_all(exp: &Experiment, records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let multi_point = exp.points.len() > 1;
    for spec in &exp.plots {
        let series = records
            .iter()
            .map(|r| Series {
                label: if multi_point {
                    format!("{} {}", describe(&r.key), r.key.point)
                } else {
                    describe(&r.key)
                },
                points: r
                    .trace
                    .iter()
                    .map(|t| (x_of(spec.x, t), y_of(spec.y, t)))
                    .collect(),
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
        let plot = LinePlot {
            title: spec
                .title
                .clone()
                .unwrap_or_else(|| format!("{} [{} profile]", exp.title, exp.profile)),
            x_label: x_label(spec.x).into(),
            y_label: y_label(spec.y).into(),
            log_y: spec.log_y,
            log_x: false,
            series,
            markers,
        };
        let stem = dir.join(&spec.file);
        render(&plot, &stem)?;
        written.push(stem);
    }
    Ok(written)
}
