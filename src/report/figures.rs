//! Convergence figures from the manifest's `[[plots]]`, with the paper's values as markers.

use super::looks::{self, method_look};
use super::sweep_names::axis_name;
use super::tables::paper_for;
use crate::manifest::{
    fmt_value, label_names, Experiment, PlotKind, PlotSpec, XAxis, KKT_ABS, LEAK_ABS, LEAK_ERR,
};
use crate::plot::style::{self, Curve, Style};
use crate::plot::ticks::trim_zeros;
use crate::plot::{
    render, render_bars, render_heatmap, BarPlot, HeatMap, LegendKey, LinePlot, Marker, Overlay,
    Series,
};
use crate::run::{describe, RunRecord, TraceRow};
use anyhow::Result;
use plotters::style::RGBColor;
use std::path::{Path, PathBuf};

/// The x value of a trace row; `clients` is the run's number of machines.
fn x_of(axis: XAxis, t: &TraceRow, clients: usize) -> f64 {
    match axis {
        XAxis::Rounds => t.round as f64,
        XAxis::Seconds => t.time_s,
        XAxis::Vectors => t.vectors,
        XAxis::CommVectors => comm_vectors(t, clients),
        XAxis::Bytes => (t.bytes_up + t.bytes_down) as f64,
    }
}

/// The CEDRE paper's count: a broadcast of one vector is 1, and one vector from every machine
/// is 1 (counted once for all). From the network's exact bytes: down/(8·dim) + up/(8·dim·K).
pub fn comm_vectors(t: &TraceRow, clients: usize) -> f64 {
    let (up, down) = (t.bytes_up as f64, t.bytes_down as f64);
    if up + down == 0.0 {
        return 0.0;
    }
    t.vectors * (down + up / clients.max(1) as f64) / (up + down)
}

fn y_of(metric: &str, t: &TraceRow) -> f64 {
    t.metric(metric).unwrap_or(f64::NAN)
}

pub fn x_label(axis: XAxis) -> &'static str {
    match axis {
        XAxis::Rounds => "communication rounds",
        XAxis::Seconds => "wall-clock of the method (s)",
        XAxis::Vectors => "n-vectors sent (up + down)",
        XAxis::CommVectors => "communicated vectors (broadcast = 1; one from every machine = 1)",
        XAxis::Bytes => "bytes sent (up + down)",
    }
}

pub fn y_label(exp: &Experiment, metric: &str) -> &'static str {
    match exp.kind.metric(metric) {
        Some(m) => m.label,
        None if metric == KKT_ABS => "KKT violation ‖(I−ZZᵀ)AAᵀZ‖_F (unscaled)",
        None if metric == LEAK_ABS => "attack error ‖Φ − A₁A₁ᵀ‖_F (unscaled)",
        None => "attack error ‖Φ − A₁A₁ᵀ‖_F / ‖A₁A₁ᵀ‖_F",
    }
}

fn short(exp: &Experiment, metric: &str) -> &'static str {
    match exp.kind.metric(metric) {
        Some(m) => m.short,
        None if metric == LEAK_ERR => "attack error",
        None if metric == KKT_ABS => "KKT (unscaled)",
        None if metric == LEAK_ABS => "attack error (unscaled)",
        None => "?",
    }
}

/// The paper's value for run `r` as a marker, with the index of the paper result it shows (one
/// marker per result, however many variants of its entry it matches), named by that entry.
fn paper_value(exp: &Experiment, r: &RunRecord, spec: &PlotSpec) -> Option<(usize, Marker)> {
    let p = paper_for(exp, &r.key)?;
    let index = exp.paper_results.iter().position(|q| std::ptr::eq(q, p))?;
    let name = &r.key.label;
    let y = p.metric(&spec.y)?;
    let (x, at) = match spec.x {
        XAxis::Rounds => (p.rounds? as f64, format!("{} rounds", p.rounds?)),
        XAxis::Seconds => (p.time_s?, format!("{} s", p.time_s?)),
        _ => return None,
    };
    // The paper's seconds come from its machine at its sizes: beside a scaled-down run they
    // are a note, not a point on our axes.
    let elsewhere = spec.x == XAxis::Seconds && exp.profile != "paper";
    let sizes = if elsewhere {
        " at the paper's sizes"
    } else {
        ""
    };
    let marker = Marker {
        label: format!(
            "paper: {name}{sizes} ({at}, {} {y:.2e})",
            short(exp, &spec.y)
        ),
        x,
        y,
        colour: method_look(&r.key.method).map(|(c, _)| c),
        off_scale: elsewhere,
    };
    Some((index, marker))
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

/// What tells a curve apart (see [`style::assign`]), owned while a figure is built.
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

/// Curves beyond this many over several sweep points get a legend by factor.
const FACTOR_LEGEND_FROM: usize = 7;

/// A sweep's many curves explained by factor: one line per method entry in its colour and dash,
/// one marker per sweep point in greys running dark to light as the curves' shades do. Empty
/// (a legend per curve) for few curves, or when an entry's parameter variants also take
/// shades.
fn legend_by_factor(exp: &Experiment, series: &[Series], keys: &[CurveKey]) -> Vec<LegendKey> {
    let points = exp.points.len();
    if points < 2 || series.len() < FACTOR_LEGEND_FROM {
        return Vec::new();
    }
    let mut lines: Vec<LegendKey> = Vec::new();
    for (s, k) in series.iter().zip(keys) {
        let variants_shaded = keys
            .iter()
            .any(|o| o.method == k.method && o.entry == k.entry && o.variant != k.variant);
        if variants_shaded {
            return Vec::new();
        }
        let Some(st) = s.style else {
            return Vec::new();
        };
        if !lines.iter().any(|l| l.label == k.name) {
            lines.push(LegendKey {
                label: k.name.clone(),
                colour: method_look(&k.method).map_or(st.colour, |(c, _)| c),
                dash: Some(st.dash),
                shape: None,
            });
        }
    }
    let grey = RGBColor(90, 90, 90);
    lines.extend(exp.points.iter().enumerate().map(|(i, p)| LegendKey {
        label: caption(exp, &p.label),
        colour: style::shade(grey, i, points),
        dash: None,
        shape: Some(style::SHAPES[i % style::SHAPES.len()]),
    }));
    lines
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

/// The (x, y) points of one run.
fn run_points(spec: &PlotSpec, r: &RunRecord, m: &str) -> Vec<(f64, f64)> {
    r.trace
        .iter()
        .map(|t| (x_of(spec.x, t, r.bytes_up_per_client.len()), y_of(m, t)))
        .collect()
}

/// The mean curve of repeats of one run (data sets drawn from different seeds, as the CEDRE
/// paper averages 10): row i averages the runs' i-th rows, a run that stopped earlier
/// contributing its last row (it stays where it stopped).
fn mean_points(runs: &[Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let len = runs.iter().map(Vec::len).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let rows: Vec<(f64, f64)> = runs
                .iter()
                .filter_map(|p| p.get(i).or(p.last()).copied())
                .collect();
            let n = rows.len() as f64;
            (
                rows.iter().map(|r| r.0).sum::<f64>() / n,
                rows.iter().map(|r| r.1).sum::<f64>() / n,
            )
        })
        .collect()
}

fn line_plot(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
    let ms = metrics(spec);
    let many = ms.len() > 1;
    let (series, keys): (Vec<Series>, Vec<CurveKey>) = if exp.repeats > 1 {
        // One mean line per (point, method entry, variant): seeds are the repeats.
        let mut groups: Vec<(&RunRecord, Vec<&RunRecord>)> = Vec::new();
        for r in records {
            let same = |g: &RunRecord| {
                g.key.point == r.key.point
                    && g.key.label == r.key.label
                    && g.key.params == r.key.params
            };
            match groups.iter_mut().find(|(g, _)| same(g)) {
                Some((_, members)) => members.push(r),
                None => groups.push((r, vec![r])),
            }
        }
        ms.iter()
            .flat_map(|&m| {
                groups.iter().map(move |(first, members)| {
                    let runs: Vec<Vec<(f64, f64)>> =
                        members.iter().map(|r| run_points(spec, r, m)).collect();
                    let s = Series {
                        label: format!(
                            "{} (mean of {})",
                            label(exp, first, many.then_some(m)),
                            members.len()
                        ),
                        points: mean_points(&runs),
                        style: None,
                    };
                    (s, CurveKey::of(exp, first, many.then_some(m)))
                })
            })
            .unzip()
    } else {
        ms.iter()
            .flat_map(|&m| {
                records.iter().map(move |r| {
                    let s = Series {
                        label: label(exp, r, many.then_some(m)),
                        points: run_points(spec, r, m),
                        style: None,
                    };
                    (s, CurveKey::of(exp, r, many.then_some(m)))
                })
            })
            .unzip()
    };
    let series = with_styles(series, &keys, exp.points.len());
    let legend = legend_by_factor(exp, &series, &keys);
    let mut markers: Vec<Marker> = Vec::new();
    let mut shown: Vec<usize> = Vec::new();
    for r in records {
        if let Some((index, mk)) = paper_value(exp, r, spec) {
            if !shown.contains(&index) {
                shown.push(index);
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
            y_label(exp, &spec.y).into()
        },
        log_y: spec.log_y,
        series,
        markers,
        keys: legend,
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

fn bars(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> BarPlot {
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

/// The name of the first sweep key, as an axis title.
fn sweep_axis(exp: &Experiment) -> String {
    exp.points
        .first()
        .and_then(|p| p.coords.first())
        .map_or("sweep point".into(), |c| axis_name(&c.0, exp.kind))
}

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
fn heatmaps(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> Vec<(String, HeatMap)> {
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

/// The spectra `y` (and `also`) of every run's final estimate against their index, with the
/// truth's where the family records one ("<name>_truth").
fn spectrum(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
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
            format!(" — {}", crate::problem::spectrum_short(name))
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
                    });
                    keys.push(None);
                }
            }
            if let Some(v) = r.spectra.get(*name) {
                series.push(Series {
                    label: format!("{}{suffix}", label(exp, r, None)),
                    points: indexed(v),
                    style: None,
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
    let (x_label, y_label) = crate::problem::spectrum_axes(exp.kind);
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
fn final_plot(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
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

/// Most sweep points a line plot is also drawn for one by one: beyond it the panels are too many
/// to look at (a heat map or a `final` plot suits such sweeps).
const MAX_PANELS: usize = 12;

/// A line plot of a sweep is one figure of every curve (colour = method, marker = point), and
/// also one panel per sweep point with only that point's curves, in the same colours and
/// markers: small multiples that stay readable where 9–12 curves crowd one axes.
fn small_multiples(
    exp: &Experiment,
    records: &[RunRecord],
    spec: &PlotSpec,
    dir: &Path,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if exp.points.len() < 2 || exp.points.len() > MAX_PANELS {
        return Ok(written);
    }
    for p in &exp.points {
        let mine: Vec<RunRecord> = records
            .iter()
            .filter(|r| r.key.point == p.label)
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        let at = caption(exp, &p.label);
        let mut plot = line_plot(exp, &mine, spec);
        plot.title = format!("{} — {at}", plot.title);
        let stem = dir.join(format!("{}__{}", spec.file, file_safe(&at)));
        render(&plot, &stem)?;
        written.push(stem);
    }
    Ok(written)
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

#[cfg(test)]
mod legend_tests {
    use super::*;
    use crate::manifest;

    #[test]
    fn many_curves_of_a_sweep_get_a_legend_by_factor() {
        let exp = manifest::load(Path::new("experiments/faps/fig2_n.toml"), "paper")
            .expect("committed manifest loads");
        let mut keys = Vec::new();
        for point in 0..exp.points.len() {
            for (method, label) in [
                ("ssi", "SSI"),
                ("localpower", "LocalPower"),
                ("faps", "FAPS"),
            ] {
                keys.push(CurveKey {
                    name: label.into(),
                    method: method.into(),
                    entry: label.into(),
                    variant: String::new(),
                    point,
                });
            }
        }
        let series = with_styles(vec![Series::default(); keys.len()], &keys, exp.points.len());
        let legend = legend_by_factor(&exp, &series, &keys);
        let labels: Vec<&str> = legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "SSI",
                "LocalPower",
                "FAPS",
                "n=2000",
                "n=3000",
                "n=4000",
                "n=5000"
            ]
        );
        // Methods in their colour without marker; points as markers without line.
        assert_eq!(legend[2].colour, method_look("faps").unwrap().0);
        assert!(legend[2].shape.is_none() && legend[3].dash.is_none());
        // Few curves keep one entry per curve.
        assert!(legend_by_factor(&exp, &series[..3], &keys[..3]).is_empty());
    }
}

#[cfg(test)]
mod comm_tests {
    use super::*;

    #[test]
    fn mean_points_carry_a_stopped_run_at_its_last_row() {
        let runs = vec![
            vec![(0.0, 1.0), (1.0, 3.0)],
            vec![(0.0, 3.0), (1.0, 5.0), (2.0, 7.0)],
        ];
        assert_eq!(mean_points(&runs), vec![(0.0, 2.0), (1.0, 4.0), (1.5, 5.0)]);
    }
    use crate::fed::vectors;

    /// A CEDRE round on K machines in dimension d: two broadcasts (w̃, ∇̃F) and two uploads per
    /// machine (A_kw̃, w_m) are 4 of the paper's vectors, plus the two scalars sent along.
    #[test]
    fn comm_vectors_count_a_broadcast_and_an_upload_from_all_once() {
        let (d, k) = (100u64, 25usize);
        let (up, down) = (8 * 2 * d * k as u64, 8 * (2 * d + 2));
        let t = TraceRow {
            round: 2,
            inner_iters: 0.0,
            time_s: 0.0,
            bytes_up: up,
            bytes_down: down,
            vectors: vectors(up + down, d as usize),
            metrics: Default::default(),
            leak_err: None,
        };
        let c = comm_vectors(&t, k);
        assert!((c - (4.0 + 2.0 / d as f64)).abs() < 1e-12, "{c}");
        assert!((x_of(XAxis::Vectors, &t, k) - (2.0 * k as f64 + 2.0 + 0.02)).abs() < 1e-12);
    }
}
