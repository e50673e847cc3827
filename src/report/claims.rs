//! A paper's claims, checked against our runs: each `[[claims]]` of a manifest names a quantity
//! (`rounds`, or a metric of the family, or the attack's `leak_err`), a method, and one test,
//! evaluated at every sweep point (means over repeats) from the stored runs:
//! - `less_than = [other methods]`: the method's value < `factor` × each other's (factor 1 by
//!   default; "far fewer" rounds is a smaller factor, written in the manifest);
//! - `at_most = v` / `at_least = v`: the method's value against a fixed number.
//!
//! A metric's value is its last finite value in the run's trace (the attack's error after its
//! last attacked round); `rounds` is the run's rounds, and a run that stopped without meeting
//! its accuracy criterion (round cap, time budget) shows "≥ rounds": its count is a lower bound, so a
//! `less_than` claim about it is judged on that bound and says so.

use crate::manifest::{ClaimSpec, Experiment};
use crate::run::RunRecord;
use std::fmt::Write;

/// One claim's verdict and the numbers behind it.
pub struct Verdict {
    pub holds: bool,
    /// Per point: "point: method value vs others' values".
    pub evidence: Vec<String>,
}

/// A run's value of `quantity`, and whether it is only a lower bound (rounds of a run that
/// did not reach the target).
fn value(r: &RunRecord, quantity: &str) -> Option<(f64, bool)> {
    if quantity == "rounds" {
        return Some((r.rounds as f64, !r.converged));
    }
    r.trace
        .iter()
        .rev()
        .find_map(|t| t.metric(quantity).filter(|v| v.is_finite()))
        .map(|v| (v, false))
}

/// Runs of `who` (a label or a method name) at `point`.
fn runs<'a>(records: &'a [RunRecord], point: &str, who: &str) -> Vec<&'a RunRecord> {
    records
        .iter()
        .filter(|r| r.key.point == point && (r.key.label == who || r.key.method == who))
        .collect()
}

/// Mean value of `who` at `point` over its runs (None without runs).
fn mean(records: &[RunRecord], point: &str, who: &str, quantity: &str) -> Option<(f64, bool)> {
    let vals: Vec<(f64, bool)> = runs(records, point, who)
        .into_iter()
        .filter_map(|r| value(r, quantity))
        .collect();
    if vals.is_empty() {
        return None;
    }
    let m = vals.iter().map(|v| v.0).sum::<f64>() / vals.len() as f64;
    Some((m, vals.iter().any(|v| v.1)))
}

fn show(v: (f64, bool), quantity: &str) -> String {
    let num = if quantity == "rounds" {
        format!("{:.0}", v.0)
    } else {
        format!("{:.3e}", v.0)
    };
    if v.1 {
        format!("≥ {num}")
    } else {
        num
    }
}

/// Judge one claim on the runs at every point that has them. A point without the method's
/// runs (or its peers') is listed and does not count; a claim with no judged point fails.
pub fn judge(exp: &Experiment, claim: &ClaimSpec, records: &[RunRecord]) -> Verdict {
    let q = claim.quantity.as_str();
    let mut holds = true;
    let mut judged = 0;
    let mut evidence = Vec::new();
    for p in &exp.points {
        let at = if p.label.is_empty() { "—" } else { &p.label };
        let Some(mine) = mean(records, &p.label, &claim.method, q) else {
            evidence.push(format!("{at}: no runs of {}", claim.method));
            continue;
        };
        let mut line = format!("{at}: {} {}", claim.method, show(mine, q));
        let mut ok = true;
        if !claim.less_than.is_empty() {
            let factor = claim.factor.unwrap_or(1.0);
            let mut others = Vec::new();
            for o in &claim.less_than {
                match mean(records, &p.label, o, q) {
                    Some(v) => {
                        ok &= mine.0 < factor * v.0;
                        others.push(format!("{o} {}", show(v, q)));
                    }
                    None => others.push(format!("{o}: no runs")),
                }
            }
            line += &format!(" vs {}", others.join(", "));
        }
        if let Some(v) = claim.at_most {
            ok &= mine.0 <= v;
        }
        if let Some(v) = claim.at_least {
            ok &= mine.0 >= v;
        }
        line += if ok { " ✔" } else { " ✘" };
        holds &= ok;
        judged += 1;
        evidence.push(line);
    }
    Verdict {
        holds: holds && judged > 0,
        evidence,
    }
}

/// The test a claim states, in words.
fn test_text(c: &ClaimSpec) -> String {
    let mut parts = Vec::new();
    if !c.less_than.is_empty() {
        let f = c.factor.map_or(String::new(), |f| format!("{f} × "));
        parts.push(format!(
            "{} of {} < {f}that of {}",
            c.quantity,
            c.method,
            c.less_than.join(", ")
        ));
    }
    if let Some(v) = c.at_most {
        parts.push(format!("{} of {} ≤ {v:e}", c.quantity, c.method));
    }
    if let Some(v) = c.at_least {
        parts.push(format!("{} of {} ≥ {v:e}", c.quantity, c.method));
    }
    format!("{}, at every point", parts.join(" and "))
}

/// The report's "Claims" section (empty without claims).
pub fn section(exp: &Experiment, records: &[RunRecord]) -> String {
    let mut s = String::new();
    if exp.claims.is_empty() {
        return s;
    }
    let _ = writeln!(s, "## Claims\n");
    let _ = writeln!(
        s,
        "Each claim of the paper, the test that stands for it here, and whether our runs of this \
         profile support it (✔) or not (✘), with the numbers behind the verdict.\n"
    );
    for c in &exp.claims {
        let v = judge(exp, c, records);
        let _ = writeln!(
            s,
            "- {} **{}** — test: {}.",
            if v.holds { "✔" } else { "✘" },
            c.text,
            test_text(c)
        );
        for e in &v.evidence {
            let _ = writeln!(s, "  - {e}");
        }
    }
    let _ = writeln!(s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunKey, TraceRow};
    use std::collections::BTreeMap;

    fn record(point: &str, label: &str, rounds: u64, converged: bool, stat: f64) -> RunRecord {
        let row = TraceRow {
            round: rounds,
            inner_iters: 0.0,
            time_s: 0.0,
            bytes_up: 0,
            bytes_down: 0,
            vectors: 0.0,
            metrics: BTreeMap::from([("stationarity".to_string(), stat)]),
            leak_err: None,
        };
        RunRecord {
            key: RunKey {
                point: point.into(),
                method: label.to_lowercase(),
                label: label.into(),
                params: String::new(),
                seed: 1,
                fingerprint: String::new(),
            },
            rounds,
            converged,
            stop_reason: String::new(),
            trace: vec![row],
            bytes_up_per_client: vec![],
            resolved: serde_json::Value::Null,
            spectra: BTreeMap::new(),
            threads: 1,
            peak_rss_mib: None,
            chosen: Default::default(),
            error: None,
        }
    }

    fn claim(text: &str) -> ClaimSpec {
        toml::from_str(text).unwrap()
    }

    /// experiments/dssal1/leakage.toml (one point), its point copied under `points`' labels.
    fn experiment(points: &[&str]) -> Experiment {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/dssal1/leakage.toml");
        let mut exp = crate::manifest::load(&path, "quick").unwrap();
        exp.points = points
            .iter()
            .map(|l| {
                let mut p = exp.points[0].clone();
                p.label = l.to_string();
                p
            })
            .collect();
        exp
    }

    #[test]
    fn less_than_must_hold_at_every_point_and_factor_scales_it() {
        let exp = experiment(&["n=1", "n=2"]);
        let runs = vec![
            record("n=1", "A", 10, true, 1e-9),
            record("n=1", "B", 30, true, 1e-9),
            record("n=2", "A", 20, true, 1e-9),
            record("n=2", "B", 30, false, 1e-3),
        ];
        let c = claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nless_than = ['B']");
        let v = judge(&exp, &c, &runs);
        assert!(v.holds, "{:?}", v.evidence);
        assert!(
            v.evidence[1].contains("≥ 30"),
            "a capped run is a lower bound"
        );
        let half =
            claim("text = 't'\nquantity = 'rounds'\nmethod = 'A'\nless_than = ['B']\nfactor = 0.5");
        let v = judge(&exp, &half, &runs);
        assert!(!v.holds, "20 < 15 fails at n=2: {:?}", v.evidence);
    }

    #[test]
    fn thresholds_read_the_last_finite_value_and_missing_runs_fail() {
        let exp = experiment(&["x"]);
        let runs = vec![record("x", "A", 5, true, 2e-6)];
        let ok = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nat_most = 1e-5");
        assert!(judge(&exp, &ok, &runs).holds);
        let bad = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'A'\nat_least = 1e-5");
        assert!(!judge(&exp, &bad, &runs).holds);
        let none = claim("text = 't'\nquantity = 'stationarity'\nmethod = 'C'\nat_most = 1.0");
        assert!(
            !judge(&exp, &none, &runs).holds,
            "no judged point: not supported"
        );
    }
}
