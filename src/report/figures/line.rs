//! `kind = "line"`: `y` (and `also`) against `x`, one line per run (or the mean of its
//! repeats), the paper's values as markers; a sweep also gets one panel per point.

use super::{
    caption, file_safe, label, metrics, short, title, with_styles, y_label, y_of, CurveKey,
};
use crate::plot::style;
use crate::plot::{render, End, LegendKey, LinePlot, Marker, Series};
use crate::report::looks::method_look;
use crate::report::tables::paper_for;
use crate::run::{RunRecord, Status, TraceRow};
use crate::spec::{Experiment, PlotSpec, XAxis};
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

pub fn x_label(axis: XAxis) -> &'static str {
    match axis {
        XAxis::Rounds => "communication rounds",
        XAxis::Seconds => "wall-clock of the method (s)",
        XAxis::Vectors => "n-vectors sent (up + down)",
        XAxis::CommVectors => "communicated vectors (broadcast = 1; one from every machine = 1)",
        XAxis::Bytes => "bytes sent (up + down)",
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
                end: None,
            });
        }
    }
    let grey = RGBColor(90, 90, 90);
    lines.extend(exp.points.iter().enumerate().map(|(i, p)| LegendKey {
        label: caption(exp, &p.label),
        colour: style::shade(grey, i, points),
        dash: None,
        shape: Some(style::SHAPES[i % style::SHAPES.len()]),
        end: None,
    }));
    lines.extend(end_keys(series));
    lines
}

/// How the runs of one curve ended, when not all converged: its end mark and the legend's
/// words ("capped", "2 of 5 capped"). A stalled run is marked unless one is capped.
fn ending(exp: &Experiment, runs: &[&RunRecord]) -> Option<(End, String)> {
    let count = |s: Status| {
        runs.iter()
            .filter(|r| r.status(&exp.stop, exp.kind) == s)
            .count()
    };
    let (end, word, k) = match (count(Status::Capped), count(Status::Stalled)) {
        (0, 0) => return None,
        (0, k) => (End::Stalled, "stalled", k),
        (k, _) => (End::Capped, "capped", k),
    };
    let n = runs.len();
    Some(if k == n {
        (end, word.to_string())
    } else {
        (end, format!("{k} of {n} {word}"))
    })
}

/// Series `s` ending as `runs` did: its end mark and "(capped)" after its label.
fn marked(mut s: Series, exp: &Experiment, runs: &[&RunRecord]) -> Series {
    if let Some((end, words)) = ending(exp, runs) {
        s.label = format!("{} ({words})", s.label);
        s.end = Some(end);
    }
    s
}

/// A legend by factor names no curve: its end marks get entries of their own.
fn end_keys(series: &[Series]) -> Vec<LegendKey> {
    [
        (End::Capped, "capped: stopped at the round cap or budget"),
        (End::Stalled, "stalled: stopped, no longer improving"),
    ]
    .into_iter()
    .filter(|(e, _)| series.iter().any(|s| s.end == Some(*e)))
    .map(|(e, label)| LegendKey {
        label: label.into(),
        colour: RGBColor(90, 90, 90),
        dash: None,
        shape: None,
        end: Some(e),
    })
    .collect()
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

pub(super) fn line_plot(exp: &Experiment, records: &[RunRecord], spec: &PlotSpec) -> LinePlot {
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
                        end: None,
                    };
                    let s = marked(s, exp, members);
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
                        end: None,
                    };
                    let s = marked(s, exp, &[r]);
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

/// Most sweep points a line plot is also drawn for one by one: beyond it the panels are too many
/// to look at (a heat map or a `final` plot suits such sweeps).
const MAX_PANELS: usize = 12;

/// A line plot of a sweep is one figure of every curve (colour = method, marker = point), and
/// also one panel per sweep point with only that point's curves, in the same colours and
/// markers: small multiples that stay readable where 9–12 curves crowd one axes.
pub(super) fn small_multiples(
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

#[cfg(test)]
mod legend_tests {
    use super::*;
    use crate::plan;
    use crate::run::TraceRow;

    #[test]
    fn many_curves_of_a_sweep_get_a_legend_by_factor() {
        let exp = plan::load(Path::new("experiments/faps/fig2_n.toml"), "paper")
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

    /// A subspace run `label` stopped for `reason`, its KKT `kkt(round)` over `rounds` rounds.
    fn kkt_run(label: &str, reason: &str, rounds: u64, kkt: impl Fn(u64) -> f64) -> RunRecord {
        let trace = (0..=rounds)
            .map(|k| {
                let mut t = TraceRow::at_start([("kkt".to_string(), kkt(k))].into());
                t.round = k;
                t
            })
            .collect();
        RunRecord::crafted("", label, false, reason, trace)
    }

    #[test]
    fn capped_and_stalled_curves_end_in_their_mark_and_say_so() {
        let mut exp = plan::load(Path::new("experiments/faps/table1.toml"), "paper")
            .expect("committed manifest loads");
        exp.stop.target = None;
        let spec: PlotSpec = toml::from_str("file = 'f'\ny = 'kkt'").unwrap();
        let geometric = |k: u64| 1e-2 * 0.9f64.powi(k as i32);
        let plateau = |k: u64| 1e-2 * 0.9f64.powi(k.min(20) as i32);
        let runs = [
            kkt_run("SSI", "max_rounds", 60, geometric),
            kkt_run("FAPS", "objective_change", 60, geometric),
            kkt_run("Stuck", "objective_change", 60, plateau),
        ];
        let plot = line_plot(&exp, &runs, &spec);
        let ends: Vec<(&str, Option<End>)> = plot
            .series
            .iter()
            .map(|s| (s.label.as_str(), s.end))
            .collect();
        assert_eq!(
            ends,
            [
                ("SSI (capped)", Some(End::Capped)),
                ("FAPS", None),
                ("Stuck (stalled)", Some(End::Stalled)),
            ]
        );
        // Drawn: each mark at the curve's end and in its legend entry.
        let dir = tempfile::tempdir().unwrap();
        let svg = |runs: &[RunRecord], name: &str| {
            let stem = dir.path().join(name);
            render(&line_plot(&exp, runs, &spec), &stem).unwrap();
            std::fs::read_to_string(stem.with_extension("svg")).unwrap()
        };
        let marked = svg(&runs, "marked");
        let plain = svg(
            &[
                kkt_run("SSI", "objective_change", 60, geometric),
                kkt_run("FAPS", "objective_change", 60, geometric),
                kkt_run("Stuck", "done", 60, plateau),
            ],
            "plain",
        );
        assert!(marked.contains("SSI (capped)") && marked.contains("Stuck (stalled)"));
        assert!(!plain.contains("capped") && !plain.contains("stalled"));
        let count = |s: &str, tag: &str| s.matches(tag).count();
        // Capped: a white disc and a ring, twice; stalled: two strokes, twice.
        assert_eq!(count(&marked, "<circle") - count(&plain, "<circle"), 2);
        assert_eq!(count(&marked, "<polyline") - count(&plain, "<polyline"), 6);
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
