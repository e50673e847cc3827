//! A paper's claims, checked against our runs: each `[[claims]]` of a manifest names a quantity
//! (`rounds`, `time_s`, a metric of the family, or the attack's `leak_err`), a method, and one
//! test, evaluated at every sweep point, or at the claim's `points`, (means over repeats) from the
//! stored runs:
//! - `less_than = [other methods]`: the method's value < `factor` × each other's (factor 1 by
//!   default; "far fewer" rounds is a smaller factor, written in the manifest);
//! - `at_most = v` / `at_least = v`: the method's value against a fixed number;
//! - `before = "metric"` (with `reach`): the quantity reaches `reach` in fewer rounds than the
//!   other metric of the same runs.
//!
//! A metric's value is its last finite value in the run's trace (the attack's error after its
//! last attacked round); with `reach = v` it is instead the first round at which the metric is
//! ≤ v. `rounds` is the run's rounds, and a run that stopped without meeting its accuracy
//! criterion (round cap, time budget), or never reached `reach`, shows "≥ rounds": its count is a
//! lower bound, so a `less_than` claim about it is judged on that bound and says so.

use crate::run::RunRecord;
use crate::spec::{ClaimSpec, Experiment};
use std::fmt::Write;

/// One claim's verdict and the numbers behind it.
pub struct Verdict {
    pub holds: bool,
    /// Points judged (0: no runs to judge it on, so it does not hold).
    pub judged: usize,
    /// Per point: "point: method value vs others' values".
    pub evidence: Vec<String>,
}

/// What a claim measures on one run: `name` (`rounds`, `time_s`, a metric, `leak_err`), or with
/// `reach` the rounds until that metric first is at or below it.
#[derive(Clone, Copy)]
struct Quantity<'a> {
    name: &'a str,
    reach: Option<f64>,
}

impl Quantity<'_> {
    fn counts_rounds(&self) -> bool {
        self.name == "rounds" || self.reach.is_some()
    }

    fn text(&self) -> String {
        match self.reach {
            Some(v) => format!("rounds to {} ≤ {v:e}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// A run's value of `q`, and whether it is only a lower bound (rounds of a run that did not
/// reach the target).
fn value(r: &RunRecord, q: Quantity) -> Option<(f64, bool)> {
    match (q.name, q.reach) {
        ("rounds", _) => Some((r.rounds as f64, !r.converged)),
        ("time_s", _) => Some((r.trace.last()?.time_s, false)),
        (m, Some(v)) => Some(
            r.trace
                .iter()
                .find(|t| t.metric(m).is_some_and(|x| x <= v))
                .map_or((r.rounds as f64, true), |t| (t.round as f64, false)),
        ),
        (m, None) => r
            .trace
            .iter()
            .rev()
            .find_map(|t| t.metric(m).filter(|v| v.is_finite()))
            .map(|v| (v, false)),
    }
}

/// The mean of a quantity over runs, and how many of them gave only a lower bound.
#[derive(Clone, Copy)]
struct Mean {
    value: f64,
    bounds: usize,
    runs: usize,
}

impl Mean {
    fn bound(&self) -> bool {
        self.bounds > 0
    }
}

/// Mean value of `who` (as `Experiment::names_run` reads it) at `point` over its runs (None
/// without runs).
fn mean(
    exp: &Experiment,
    records: &[RunRecord],
    point: &str,
    who: &str,
    q: Quantity,
) -> Option<Mean> {
    let vals: Vec<(f64, bool)> = records
        .iter()
        .filter(|r| {
            r.key.point == point && exp.names_run(who, &r.key.method, &r.key.label, &r.key.params)
        })
        .filter_map(|r| value(r, q))
        .collect();
    if vals.is_empty() {
        return None;
    }
    Some(Mean {
        value: vals.iter().map(|v| v.0).sum::<f64>() / vals.len() as f64,
        bounds: vals.iter().filter(|v| v.1).count(),
        runs: vals.len(),
    })
}

/// "≥ 258 (3 of 5 reached)": a mean over repeats says how many gave the exact count.
fn show(m: Mean, q: Quantity) -> String {
    let num = if q.counts_rounds() {
        format!("{:.0}", m.value)
    } else if q.name == "time_s" {
        format!("{:.2} s", m.value)
    } else {
        format!("{:.3e}", m.value)
    };
    match (m.bound(), m.runs) {
        (false, _) => num,
        (true, 1) => format!("≥ {num}"),
        (true, n) => format!(
            "≥ {num} ({} of {n} {})",
            n - m.bounds,
            if q.reach.is_some() {
                "reached"
            } else {
                "converged"
            }
        ),
    }
}

/// Judge one claim on the runs at every point that has them (or at the claim's `points`). A
/// point without the method's runs (or its peers') is listed and does not count; a claim with no
/// judged point fails.
pub fn judge(exp: &Experiment, claim: &ClaimSpec, records: &[RunRecord]) -> Verdict {
    let q = Quantity {
        name: &claim.quantity,
        reach: claim.reach,
    };
    let mut holds = true;
    let mut judged = 0;
    let mut evidence = Vec::new();
    for p in &exp.points {
        if !claim.points.is_empty() && !claim.points.contains(&p.label) {
            continue;
        }
        let at = if p.label.is_empty() { "—" } else { &p.label };
        let Some(mine) = mean(exp, records, &p.label, &claim.method, q) else {
            evidence.push(format!("{at}: no runs of {}", claim.method));
            continue;
        };
        let mut line = format!("{at}: {} {}", claim.method, show(mine, q));
        let mut ok = true;
        if !claim.less_than.is_empty() {
            let factor = claim.factor.unwrap_or(1.0);
            let mut others = Vec::new();
            for o in &claim.less_than {
                match mean(exp, records, &p.label, o, q) {
                    Some(v) => {
                        ok &= mine.value < factor * v.value;
                        others.push(format!("{o} {}", show(v, q)));
                    }
                    None => others.push(format!("{o}: no runs")),
                }
            }
            line += &format!(" vs {}", others.join(", "));
        }
        if let Some(v) = claim.at_most {
            ok &= mine.value <= v;
        }
        if let Some(v) = claim.at_least {
            ok &= mine.value >= v;
        }
        if let Some(other) = &claim.before {
            let oq = Quantity {
                name: other,
                reach: claim.reach,
            };
            match mean(exp, records, &p.label, &claim.method, oq) {
                // A target neither run reached proves nothing either way.
                Some(v) => {
                    ok &= !mine.bound() && mine.value < v.value;
                    line += &format!(" vs {} {}", oq.text(), show(v, oq));
                }
                None => line += &format!(" ({other} not in the trace)"),
            }
        }
        line += if ok { " ✔" } else { " ✘" };
        holds &= ok;
        judged += 1;
        evidence.push(line);
    }
    Verdict {
        holds: holds && judged > 0,
        judged,
        evidence,
    }
}

/// The test a claim states, in words.
fn test_text(c: &ClaimSpec) -> String {
    let quantity = Quantity {
        name: &c.quantity,
        reach: c.reach,
    };
    let q = quantity.text();
    let mut parts = Vec::new();
    if !c.less_than.is_empty() {
        let f = c.factor.map_or(String::new(), |f| format!("{f} × "));
        parts.push(format!(
            "{q} of {} < {f}that of {}",
            c.method,
            c.less_than.join(", ")
        ));
    }
    let num = |v: f64| {
        if quantity.counts_rounds() {
            format!("{v}")
        } else {
            format!("{v:e}")
        }
    };
    if let Some(v) = c.at_most {
        parts.push(format!("{q} of {} ≤ {}", c.method, num(v)));
    }
    if let Some(v) = c.at_least {
        parts.push(format!("{q} of {} ≥ {}", c.method, num(v)));
    }
    if let Some(other) = &c.before {
        let o = Quantity {
            name: other,
            reach: c.reach,
        }
        .text();
        parts.push(format!("{q} of {} < its {o}", c.method));
    }
    let at = if c.points.is_empty() {
        "at every point".to_string()
    } else {
        format!("at {}", c.points.join(", "))
    };
    format!("{}, {at}", parts.join(" and "))
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
        traced(point, label, converged, &[(rounds, stat, f64::NAN)])
    }

    /// A run whose trace rows are (round, stationarity, leak_err), with time_s = round / 10.
    fn traced(point: &str, label: &str, converged: bool, rows: &[(u64, f64, f64)]) -> RunRecord {
        let trace = rows
            .iter()
            .map(|&(round, stat, leak)| TraceRow {
                round,
                inner_iters: 0.0,
                time_s: round as f64 / 10.0,
                bytes_up: 0,
                bytes_down: 0,
                vectors: 0.0,
                metrics: BTreeMap::from([("stationarity".to_string(), stat)]),
                leak_err: Some(leak),
            })
            .collect::<Vec<_>>();
        RunRecord {
            key: RunKey {
                point: point.into(),
                // Not a label or name of the test manifest: the claims name it as a method.
                method: label.into(),
                label: label.into(),
                params: String::new(),
                seed: 1,
                fingerprint: String::new(),
            },
            rounds: trace.last().map_or(0, |t| t.round),
            converged,
            stop_reason: String::new(),
            trace,
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
        let mut exp = crate::plan::load(&path, "quick").unwrap();
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

    #[test]
    fn reach_counts_rounds_to_a_value_and_before_compares_two_metrics() {
        let exp = experiment(&["x", "y"]);
        let runs = vec![
            // At x the attack (leak_err) is exact at round 2, stationarity gets there at 3.
            traced(
                "x",
                "A",
                true,
                &[(1, 1e-2, 1e-3), (2, 1e-4, 1e-7), (3, 1e-7, 1e-8)],
            ),
            traced(
                "x",
                "B",
                true,
                &[(1, 1e-2, 1e-3), (2, 1e-3, 1e-3), (4, 1e-4, 1e-3)],
            ),
            // At y it never gets there: a lower bound.
            traced("y", "A", false, &[(1, 1e-2, 1e-3), (2, 1e-3, 1e-3)]),
        ];
        let to = claim(
            "text = 't'\nquantity = 'stationarity'\nreach = 1e-5\nmethod = 'A'\nless_than = ['B']\npoints = ['x']",
        );
        let v = judge(&exp, &to, &runs);
        assert!(v.holds, "3 < ≥ 4 at x only: {:?}", v.evidence);
        assert_eq!(v.evidence.len(), 1, "judged at x only");
        assert!(v.evidence[0].contains("A 3 vs B ≥ 4"), "{:?}", v.evidence);
        let cap =
            claim("text = 't'\nquantity = 'stationarity'\nreach = 1e-5\nmethod = 'A'\nat_most = 5");
        let v = judge(&exp, &cap, &runs);
        assert!(v.holds && v.evidence[1].contains("≥ 2"), "{:?}", v.evidence);
        let before = claim(
            "text = 't'\nquantity = 'leak_err'\nreach = 1e-5\nmethod = 'A'\nbefore = 'stationarity'",
        );
        let v = judge(&exp, &before, &runs);
        assert!(
            v.evidence[0].ends_with("✔"),
            "2 before 3 at x: {:?}",
            v.evidence
        );
        assert!(
            v.evidence[1].ends_with("✘"),
            "never reached at y: {:?}",
            v.evidence
        );
        assert!(!v.holds);
        let time =
            claim("text = 't'\nquantity = 'time_s'\nmethod = 'A'\nat_most = 0.3\npoints = ['x']");
        let v = judge(&exp, &time, &runs);
        assert!(
            v.holds && v.evidence[0].contains("0.30 s"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn a_claim_names_the_entry_and_never_its_variants() {
        // inner_study: four entries of method faps; a paper number names one of them.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/faps/inner_study.toml");
        let exp = crate::plan::load(&path, "paper").unwrap();
        assert!(exp.names_run("FAPS rule (26)", "faps", "FAPS rule (26)", ""));
        assert!(!exp.names_run("FAPS rule (26)", "faps", "FAPS fixed", "inner_steps=5"));
        assert!(exp.names_run(
            "FAPS fixed (inner_steps=5)",
            "faps",
            "FAPS fixed",
            "inner_steps=5"
        ));
        assert!(!exp.names_run(
            "FAPS fixed (inner_steps=5)",
            "faps",
            "FAPS fixed",
            "inner_steps=3"
        ));
        assert!(exp.names_run("FAPS fixed", "faps", "FAPS fixed", "inner_steps=3"));
        assert!(exp.names_run("ssi", "ssi", "SSI", ""));
    }
}
