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
