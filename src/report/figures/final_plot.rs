//! `kind = "final"`: each run's final `y` against a swept method parameter.

use super::{caption, title, with_styles, y_label, y_of, CurveKey};
use crate::plot::{LinePlot, Series};
use crate::run::RunRecord;
use crate::spec::{Experiment, PlotSpec};

/// The value of the first of `params` in a run's variant ("lambda1=10;rho=1000").
fn param_value(variant: &str, params: &[String]) -> Option<f64> {
    params.iter().find_map(|want| {
        variant.split(';').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == want).then(|| v.parse().ok()).flatten()
        })
    })
}

/// Each run's final value of `y` against the value of a swept method parameter: one line per
/// method label and sweep point (the sparse PCA paper's fig. 3).
pub(super) fn final_plot(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
    let mut series: Vec<Series> = Vec::new();
    let mut keys: Vec<CurveKey> = Vec::new();
    for r in records {
        let (Some(x), Some(last)) = (param_value(&r.key.params, &spec.params), r.trace.last())
        else {
            continue;
        };
        let mut name = r.key.label.clone();
        if exp.points.len() > 1 {
            name = format!("{name} {}", caption(exp, &r.key.point));
        }
        let point = (x, y_of(&spec.y, last));
        match series.iter_mut().find(|s| s.label == name) {
            Some(s) => s.points.push(point),
            None => {
                series.push(Series {
                    label: name,
                    points: vec![point],
                    style: None,
                    end: None,
                });
                // The swept parameter is the x axis: one curve spans its values.
                keys.push(CurveKey {
                    variant: String::new(),
                    ..CurveKey::of(exp, r, None)
                });
            }
        }
    }
    let mut series = with_styles(series, &keys, exp.points.len());
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    LinePlot {
        title: title(exp, spec),
        x_label: spec.params.join(" / "),
        y_label: y_label(exp, &spec.y).into(),
        log_y: spec.log_y,
        series,
        markers: Vec::new(),
        keys: Vec::new(),
    }
}
