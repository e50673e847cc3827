//! `kind = "spectrum"`: the spectra of every run's final estimate against their index, beside
//! the truth's.

use super::{caption, label, metrics, styles, title, CurveKey};
use crate::plot::style::Style;
use crate::plot::{LinePlot, Series};
use crate::run::RunRecord;
use crate::spec::{Experiment, PlotSpec};

/// The spectra `y` (and `also`) of every run's final estimate against their index, with the
/// truth's where the family records one ("<name>_truth").
pub(super) fn spectrum(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
    let many = exp.points.len() > 1;
    let names = metrics(spec);
    let at = |point: &str| {
        if many {
            format!(" {}", caption(exp, point))
        } else {
            String::new()
        }
    };
    let indexed = |v: &[f64]| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, &x)| ((i + 1) as f64, x))
            .collect()
    };
    let mut series: Vec<Series> = Vec::new();
    // Runs' curves take their method's style; the truth's is the reference style.
    let mut keys: Vec<Option<CurveKey>> = Vec::new();
    for name in &names {
        let truth = format!("{name}_truth");
        let suffix = if names.len() > 1 {
            format!(
                " — {}",
                crate::problem::family(exp.kind)
                    .spectrum_short(name)
                    .unwrap_or(name)
            )
        } else {
            String::new()
        };
        for r in records {
            if let Some(t) = r.spectra.get(&truth) {
                let label = format!("truth{}{suffix}", at(&r.key.point));
                if !series.iter().any(|s| s.label == label) {
                    series.push(Series {
                        label,
                        points: indexed(t),
                        style: None,
                        end: None,
                    });
                    keys.push(None);
                }
            }
            if let Some(v) = r.spectra.get(*name) {
                series.push(Series {
                    label: format!("{}{suffix}", label(exp, r, None)),
                    points: indexed(v),
                    style: None,
                    end: None,
                });
                let metric = (names.len() > 1).then_some(*name);
                keys.push(Some(CurveKey::of(exp, r, metric)));
            }
        }
    }
    let mut run_styles = styles(keys.iter().flatten(), exp.points.len()).into_iter();
    for (s, k) in series.iter_mut().zip(&keys) {
        s.style = match k {
            Some(_) => run_styles.next(),
            None => Some(Style::reference()),
        };
    }
    let (x_label, y_label) = crate::problem::family(exp.kind).spectrum_axes();
    LinePlot {
        title: title(exp, spec),
        x_label: x_label.into(),
        y_label: y_label.into(),
        log_y: spec.log_y,
        series,
        markers: Vec::new(),
        keys: Vec::new(),
    }
}
