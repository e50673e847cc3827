//! Pieces of report.md's tables that its sections share (the main report and the stop study):
//! paper-beside-ours cells, runs grouped by method, means.

use crate::run::{describe, RunRecord};

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
