//! Rule (27) at looser tolerances, read off the traces (`looser_tolerances` in a manifest).
//!
//! A run stopped by a looser tolerance is the same run ended earlier: every round before the
//! stop is identical. So each run's trace tells where a looser rule would have stopped it and
//! what its metrics were there, without running anything again. This answers a question the
//! FAPS paper raises: its reported accuracies at the stop (Tables 2 and 4) are those our runs
//! pass well before rule (27) with its stated 1e-10 stops them.

use super::cells::{beside, by_method, mean};
use super::tables::{paper_average, paper_for, reported_metrics};
use crate::run::{Outcome, RunRecord};
use crate::spec::Experiment;
use std::fmt::Write;

/// The round at which rule (27), |f_k − f_(k−1)| ≤ tol·f_k, stops `r`; None if it does not
/// fire before the run ended. A method reports f at the estimate it broadcasts, which is the
/// trace's objective one round earlier: round k stops when the trace's objectives at rounds
/// k − 1 and k − 2 are within tol. (Checked: this gives the stop round of every committed FAPS
/// run that (27) stopped.) Needs consecutive rounds in the trace.
pub fn stop_round(r: &RunRecord, tol: f64) -> Option<u64> {
    r.trace
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (w[0].metric("objective")?, w[1].metric("objective")?);
            let consecutive = w[1].round == w[0].round + 1;
            (consecutive && (b - a).abs() <= tol * b.abs()).then_some(w[1].round + 1)
        })
        .find(|&k| k <= r.rounds)
}

/// Where `r` ends under rule (27) at `tol`: where that stops it, else where it ended.
fn end_round(r: &RunRecord, tol: f64) -> u64 {
    stop_round(r, tol).unwrap_or(r.rounds)
}

/// Metric `name` of `r` after round `end` (its last traced round up to `end`).
fn metric_at(r: &RunRecord, end: u64, name: &str) -> Option<f64> {
    r.trace
        .iter()
        .rev()
        .find(|t| t.round <= end)
        .and_then(|t| t.metric(name))
}

/// The report's section: per method (means over the sweep points), rounds and the reported
/// metrics at the run's own tolerance and at each looser one, beside the paper's numbers.
pub fn section(exp: &Experiment, out: &Outcome) -> String {
    let mut s = String::new();
    let Some(own) = exp.stop.objective_tol else {
        return s;
    };
    if exp.looser_tolerances.is_empty() || out.records.is_empty() {
        return s;
    }
    let sweep = exp.points.len() > 1;
    let _ = writeln!(s, "\n## Rule (27) at looser tolerances\n");
    let _ = writeln!(
        s,
        "Where rule (27), |f_k − f_(k−1)| ≤ τ·f_k, would have stopped the same runs at a looser τ \
         than the manifest's {own:e}, and their metrics there, read off `trace.csv` (a looser \
         stop ends the same run earlier; no run is repeated). A run that a looser τ does not stop \
         keeps its own end. {}The paper's numbers are the same as in the tables above.\n",
        if sweep {
            format!("Means over the {} sweep points. ", exp.points.len())
        } else {
            String::new()
        }
    );
    let metrics = reported_metrics(exp);
    let mut header = "| method | τ | rounds (paper) | (ours) |".to_string();
    for m in &metrics {
        header += &format!(" {} (paper) | (ours) | ratio |", m.short);
    }
    let _ = writeln!(s, "{header}");
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|{}",
        "---:|---:|---:|".repeat(metrics.len())
    );
    let tolerances: Vec<f64> = std::iter::once(own)
        .chain(exp.looser_tolerances.iter().copied())
        .collect();
    for (name, runs) in by_method(&out.records) {
        let k = &runs[0].key;
        let paper = if sweep {
            paper_average(exp, &k.method, &k.label, &k.params)
        } else {
            paper_for(exp, k)
        };
        for &tol in &tolerances {
            let rounds = mean(runs.iter().map(|r| end_round(r, tol) as f64));
            let mut line = format!(
                "| {name} | {tol:e} | {} | {rounds:.1} |",
                paper
                    .and_then(|p| p.run_rounds())
                    .map_or("—".into(), |v| v.to_string())
            );
            for m in &metrics {
                let ours = mean(
                    runs.iter()
                        .map(|r| metric_at(r, end_round(r, tol), m.name).unwrap_or(f64::NAN)),
                );
                line += &beside(ours, paper.and_then(|p| p.metric(m.name)));
            }
            let _ = writeln!(s, "{line}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::TraceRow;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn record(objectives: &[f64], rounds: u64) -> RunRecord {
        let trace = objectives
            .iter()
            .enumerate()
            .map(|(i, &f)| TraceRow {
                round: i as u64,
                inner_iters: 0.0,
                time_s: 0.0,
                bytes_up: 0,
                bytes_down: 0,
                vectors: 0.0,
                metrics: BTreeMap::from([
                    ("objective".to_string(), f),
                    ("kkt".to_string(), 1.0 / (i + 1) as f64),
                ]),
                leak_err: None,
            })
            .collect();
        let mut r = RunRecord::crafted("", "SSI", true, "objective_change", trace);
        r.key.method = "ssi".into();
        r.rounds = rounds;
        r
    }

    /// Round k stops when the objectives of rounds k − 1 and k − 2 are within tol: one round
    /// after the trace shows the small change, because a method reports f at its broadcast.
    #[test]
    fn the_rule_fires_one_round_after_the_trace_shows_it() {
        // Relative changes: 1→2: 0.5, 2→3: 1/3, 3→3.03: 0.0099, 3.03→3.0303: 9.9e-5.
        let r = record(&[1.0, 2.0, 3.0, 3.03, 3.0303, 3.030303], 5);
        assert_eq!(stop_round(&r, 1e-4), Some(5));
        assert_eq!(stop_round(&r, 0.01), Some(4));
        assert_eq!(stop_round(&r, 0.4), Some(3));
        // Fires only after the run ended: not at all.
        assert_eq!(stop_round(&r, 1e-6), None);
        let short = record(&[1.0, 2.0, 3.0, 3.03, 3.0303, 3.030303], 4);
        assert_eq!(stop_round(&short, 1e-4), None);
        // The metrics are read at the stop round; without a stop, at the run's end.
        assert_eq!(end_round(&r, 0.01), 4);
        assert_eq!(metric_at(&r, 4, "kkt"), Some(0.2));
        assert_eq!(end_round(&r, 1e-6), 5);
        assert_eq!(metric_at(&r, 5, "kkt"), Some(1.0 / 6.0));
    }

    /// At the manifest's own tolerance, the rule read off the committed traces stops every run
    /// that (27) stopped exactly where it stopped (FAPS table4 and the n sweep of fig2, quick).
    #[test]
    fn the_manifest_tolerance_gives_the_committed_stop_rounds() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for id in ["table4", "fig2_n", "fig4"] {
            let exp = crate::plan::load(&root.join(format!("experiments/faps/{id}.toml")), "quick")
                .unwrap();
            let dir = root.join(format!("results/faps/{id}/quick"));
            let out = crate::report::reload::outcome_from_csv(&exp, &dir).unwrap();
            let tol = exp.stop.objective_tol.unwrap();
            for r in &out.records {
                if r.stop_reason == "objective_change" {
                    assert_eq!(stop_round(r, tol), Some(r.rounds), "{id} {:?}", r.key);
                    checked += 1;
                } else {
                    assert_eq!(stop_round(r, tol), None, "{id} {:?}", r.key);
                }
            }
        }
        assert!(checked >= 10, "only {checked} runs stopped by (27)");
    }
}
