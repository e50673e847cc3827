//! `kind = "rounds_to_target"`: per method, the first round at which `y` (and each of `also`)
//! is at or below `target`, against the sweep's first coordinate.

use super::{metrics, short, sweep_axis, title, with_styles, y_of, CurveKey};
use crate::plot::{LinePlot, Series};
use crate::run::{describe, RunRecord};
use crate::spec::{Experiment, PlotSpec};

/// The first sweep coordinate of a point as a number (the x of a rounds-to-target plot).
fn coordinate(exp: &Experiment, point: &str) -> Option<f64> {
    let p = exp.points.iter().find(|p| p.label == point)?;
    match p.coords.first()?.1 {
        toml::Value::Integer(i) => Some(i as f64),
        toml::Value::Float(f) => Some(f),
        _ => None,
    }
}

pub(super) fn rounds_to_target(
    exp: &Experiment,
    records: &[RunRecord],
    spec: &PlotSpec,
) -> LinePlot {
    let target = spec
        .target
        .expect("validated: rounds_to_target has a target");
    let mut series: Vec<Series> = Vec::new();
    let mut keys: Vec<CurveKey> = Vec::new();
    let many = !spec.also.is_empty();
    for m in metrics(spec) {
        for r in records {
            let name = format!("{} — {}", describe(&r.key), short(exp, m));
            let x = coordinate(exp, &r.key.point).unwrap_or(f64::NAN);
            let y = r
                .first_round_below(|t| Some(y_of(m, t)).filter(|v| v.is_finite()), target)
                .map_or(f64::NAN, |k| k as f64);
            match series.iter_mut().find(|s| s.label == name) {
                Some(s) => s.points.push((x, y)),
                None => {
                    series.push(Series {
                        label: name,
                        points: vec![(x, y)],
                        style: None,
                        end: None,
                    });
                    // The sweep is the x axis: one curve spans every point.
                    let key = CurveKey::of(exp, r, many.then_some(m));
                    keys.push(CurveKey { point: 0, ..key });
                }
            }
        }
    }
    LinePlot {
        title: title(exp, spec),
        x_label: sweep_axis(exp),
        y_label: format!("rounds until ≤ {target:e}"),
        log_y: spec.log_y,
        series: with_styles(series, &keys, 1),
        markers: Vec::new(),
        keys: Vec::new(),
    }
}
