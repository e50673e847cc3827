//! `kind = "bars"`: one group of bars per sweep point, one bar per method, its run's rounds
//! or seconds.

use super::{caption, styles, sweep_axis, title, CurveKey};
use crate::plot::BarPlot;
use crate::run::{describe, RunRecord};
use crate::spec::{Experiment, PlotSpec, XAxis};

pub(super) fn bars(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> BarPlot {
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    let mut keys: Vec<CurveKey> = Vec::new();
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
            keys.push(CurveKey {
                point: 0,
                ..CurveKey::of(exp, r, None)
            });
        }
        let g = groups
            .iter_mut()
            .find(|g| g.0 == name)
            .expect("just inserted");
        g.1[i] = v;
    }
    BarPlot {
        title: title(exp, spec),
        x_label: sweep_axis(exp),
        y_label: match spec.x {
            XAxis::Seconds => "wall-clock of the method (s)".into(),
            _ => "communication rounds".into(),
        },
        log_y: spec.log_y,
        categories: exp.points.iter().map(|p| caption(exp, &p.label)).collect(),
        groups,
        colours: styles(&keys, 1).iter().map(|s| s.colour).collect(),
    }
}
