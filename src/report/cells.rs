//! Pieces of report.md's tables that its sections share (the main report and the stop study):
//! paper-beside-ours cells, runs grouped by method, means.

use super::tables::{paper_average, paper_for};
use crate::run::{describe, RunRecord};
use crate::spec::{Experiment, PaperResult};

pub(super) fn sci(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.2e}"))
}

pub(super) fn ratio(ours: f64, paper: Option<f64>) -> String {
    match paper {
        Some(p) if p != 0.0 && (ours / p).abs() < 0.1 => format!("{:.1e}", ours / p),
        Some(p) if p != 0.0 => format!("{:.2}", ours / p),
        _ => "—".into(),
    }
}

/// `cell` as a lower bound ("≥ 3000") when `bound`: the rounds of a run that did not converge,
/// and any ratio computed from them.
pub(super) fn at_least(cell: String, bound: bool) -> String {
    if bound && cell != "—" {
        format!("≥ {cell}")
    } else {
        cell
    }
}

/// " paper | ours | ratio |" cells of a table row.
pub(super) fn beside(ours: f64, theirs: Option<f64>) -> String {
    format!(
        " {} | {} | {} |",
        sci(theirs),
        sci(Some(ours)),
        ratio(ours, theirs)
    )
}

/// The runs of each method variant (over sweep points and repeats), in order of first run.
pub(super) fn by_method(records: &[RunRecord]) -> Vec<(String, Vec<&RunRecord>)> {
    let mut groups: Vec<(String, Vec<&RunRecord>)> = Vec::new();
    for r in records {
        let d = describe(&r.key);
        match groups.iter_mut().find(|(name, _)| *name == d) {
            Some((_, runs)) => runs.push(r),
            None => groups.push((d, vec![r])),
        }
    }
    groups
}

pub(super) fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n.max(1) as f64
}

/// `s` as literal Markdown text on one line: characters that would start emphasis, code, a link,
/// raw HTML, an entity or a table cell are backslash-escaped, line breaks and other control
/// characters become spaces. For text from papers/*.toml, which no one renders before us.
pub(crate) fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\`*_[]<>&|~!#".contains(c) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs of one configuration (point, label, params) — its repeats — in first-seen order.
pub(super) fn repeat_groups(records: &[RunRecord]) -> Vec<Vec<&RunRecord>> {
    let mut groups: Vec<Vec<&RunRecord>> = Vec::new();
    for r in records {
        let same = |g: &Vec<&RunRecord>| {
            let k = &g[0].key;
            (&k.point, &k.label, &k.params) == (&r.key.point, &r.key.label, &r.key.params)
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

/// Mean over runs of a metric's final value as [`super::quantity::value`] reads it, the reader
/// the claims and the scorecard use (NaN when no run gives one).
pub(super) fn mean_metric(runs: &[&RunRecord], name: &str) -> f64 {
    super::quantity::mean_of(
        runs.iter().copied(),
        super::quantity::Quantity::of(name, None),
    )
    .map_or(f64::NAN, |m| m.value)
}

/// The runs a paper result stands beside in report.md, one group per row there: each
/// configuration (its repeats) whose [`paper_for`] it is, or for a sweep's result without a point
/// (an average over the points) each method variant whose [`paper_average`] it is, over every
/// point. `pr` is one of `exp.paper_results`.
pub(super) fn runs_beside<'a>(
    exp: &Experiment,
    records: &'a [RunRecord],
    pr: &PaperResult,
) -> Vec<Vec<&'a RunRecord>> {
    let is_it = |p: Option<&PaperResult>| p.is_some_and(|p| std::ptr::eq(p, pr));
    if exp.points.len() > 1 && pr.point.is_none() {
        by_method(records)
            .into_iter()
            .map(|(_, runs)| runs)
            .filter(|r| {
                let k = &r[0].key;
                is_it(paper_average(exp, &k.method, &k.label, &k.params))
            })
            .collect()
    } else {
        repeat_groups(records)
            .into_iter()
            .filter(|g| is_it(paper_for(exp, &g[0].key)))
            .collect()
    }
}
