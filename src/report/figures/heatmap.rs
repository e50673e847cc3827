//! `kind = "heatmap"`: per method, the final `y` over the grid of two sweep keys, with the
//! paper's boundary drawn over it.

use super::{short, title};
use crate::plot::ticks::trim_zeros;
use crate::plot::{HeatMap, Overlay};
use crate::report::sweep_names::axis_name;
use crate::run::{describe, RunRecord};
use crate::spec::{Experiment, PlotSpec};

/// The value of sweep key `key` at `point`, as a number.
fn coord(exp: &Experiment, point: &str, key: &str) -> Option<f64> {
    let p = exp.points.iter().find(|p| p.label == point)?;
    match p.coords.iter().find(|c| c.0 == key)?.1 {
        toml::Value::Integer(i) => Some(i as f64),
        toml::Value::Float(f) => Some(f),
        _ => None,
    }
}

/// Where axis value `v` falls in cell-index units of the sorted grid values `vals` (cell i is
/// [i, i+1], its value at the centre), interpolated linearly between centres.
fn cell_position(vals: &[f64], v: f64) -> f64 {
    if vals.len() < 2 {
        return 0.5;
    }
    let i = vals
        .windows(2)
        .position(|w| v <= w[1])
        .unwrap_or(vals.len() - 2);
    i as f64 + 0.5 + (v - vals[i]) / (vals[i + 1] - vals[i])
}

/// One heat map per method: the final `y` over the grid of the two sweep keys `grid`
/// (mean over repeats).
pub(super) fn heatmaps(
    exp: &Experiment,
    records: &[RunRecord],
    spec: &PlotSpec,
) -> Vec<(String, HeatMap)> {
    let (kx, ky) = (&spec.grid[0], &spec.grid[1]);
    let values = |k: &str| {
        let mut v: Vec<f64> = exp
            .points
            .iter()
            .filter_map(|p| coord(exp, &p.label, k))
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (values(kx), values(ky));
    let names = [axis_name(kx, exp.kind), axis_name(ky, exp.kind)];
    let mut methods: Vec<String> = Vec::new();
    for r in records {
        if !methods.contains(&describe(&r.key)) {
            methods.push(describe(&r.key));
        }
    }
    let n = exp.points.first().map_or(1, |p| p.data.n) as f64;
    // A rank axis also reads as a fraction of n, as the paper plots it.
    let tick = |k: &str, v: f64| {
        let t = trim_zeros(&format!("{v:.4}")).to_string();
        if k == "data.rank" {
            format!("{t} ({}n)", trim_zeros(&format!("{:.3}", v / n)))
        } else {
            t
        }
    };
    // The paper's boundary: recovery succeeds in the box x ≤ mark_x, y ≤ mark_y, so its edge is
    // one polyline (or one straight line when only one mark is given).
    let (w, h) = (xs.len() as f64, ys.len() as f64);
    let points = match (
        spec.mark_x.map(|v| cell_position(&xs, v)),
        spec.mark_y.map(|v| cell_position(&ys, v)),
    ) {
        (Some(x), Some(y)) => vec![(x, 0.0), (x, y), (0.0, y)],
        (Some(x), None) => vec![(x, 0.0), (x, h)],
        (None, Some(y)) => vec![(0.0, y), (w, y)],
        (None, None) => Vec::new(),
    };
    let overlays: Vec<Overlay> = if points.is_empty() {
        Vec::new()
    } else {
        vec![Overlay {
            label: spec.mark_label.clone().unwrap_or_else(|| "boundary".into()),
            points,
        }]
    };
    methods
        .into_iter()
        .map(|m| {
            let mut grid = vec![vec![(0.0, 0usize); xs.len()]; ys.len()];
            for r in records.iter().filter(|r| describe(&r.key) == m) {
                let (Some(x), Some(y)) = (
                    coord(exp, &r.key.point, kx).and_then(|x| xs.iter().position(|v| *v == x)),
                    coord(exp, &r.key.point, ky).and_then(|y| ys.iter().position(|v| *v == y)),
                ) else {
                    continue;
                };
                let v = r.last().metric(&spec.y).unwrap_or(f64::NAN);
                let cell = &mut grid[y][x];
                *cell = (cell.0 + if spec.log_y { v.log10() } else { v }, cell.1 + 1);
            }
            let plot = HeatMap {
                title: format!("{} — {m}", title(exp, spec)),
                x_label: names[0].clone(),
                y_label: names[1].clone(),
                x_ticks: xs.iter().map(|&v| tick(kx, v)).collect(),
                y_ticks: ys.iter().map(|&v| tick(ky, v)).collect(),
                values: grid
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|&(s, c)| if c == 0 { f64::NAN } else { s / c as f64 })
                            .collect()
                    })
                    .collect(),
                colour_label: if spec.log_y {
                    format!("log₁₀ {}", short(exp, &spec.y))
                } else {
                    short(exp, &spec.y).to_string()
                },
                overlays: overlays.clone(),
            };
            (m, plot)
        })
        .collect()
}
