//! The numbers a manifest's prose asks for (`{{rounds of FAPS at kappa=10}}`, see
//! [`crate::spec::placeholder`]), filled in from the runs as the claims' evidence prints them:
//! "≥ N" for a bound, "(k of n converged)" over repeats, a ratio with 2 decimals. The names were
//! checked when the manifest loaded; a point with no runs yet reads "(not run)", one that is not
//! in this profile's sweep "(not in this profile)".

use super::quantity::{mean, show, Quantity};
use crate::run::RunRecord;
use crate::spec::placeholder::{scan, Placeholder};
use crate::spec::Experiment;

/// `text` with each placeholder replaced by its number (a text that does not parse, which
/// loading refuses, is left as it is).
pub fn render(exp: &Experiment, records: &[RunRecord], text: &str) -> String {
    let Ok(found) = scan(text) else {
        return text.to_string();
    };
    let mut out = String::new();
    let mut from = 0;
    for p in found {
        out += &text[from..p.span.start];
        out += &number(exp, records, &p);
        from = p.span.end;
    }
    out += &text[from..];
    out
}

/// One placeholder's number.
fn number(exp: &Experiment, records: &[RunRecord], p: &Placeholder) -> String {
    let point = match &p.at {
        Some(a) => exp.points.iter().find(|q| &q.label == a),
        None => exp.points.first().filter(|_| exp.points.len() == 1),
    };
    let Some(point) = point else {
        return "(not in this profile)".into();
    };
    let q = Quantity::of(&p.quantity, p.reach);
    let Some(num) = mean(exp, records, &point.label, &p.method, q) else {
        return "(not run)".into();
    };
    match &p.divided_by {
        None => show(num, q),
        Some(d) => match mean(exp, records, &point.label, d, q) {
            Some(den) => show(num.over(den), Quantity { ratio: true, ..q }),
            None => "(not run)".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::claims::tests::experiment;
    use crate::run::TraceRow;
    use std::collections::BTreeMap;

    /// A run of `label` at `point`: `rounds` rounds, stationarity halving each round from 1.
    fn run(point: &str, label: &str, rounds: u64, converged: bool) -> RunRecord {
        let trace: Vec<TraceRow> = (0..=rounds)
            .map(|k| TraceRow {
                round: k,
                inner_iters: 0.0,
                time_s: k as f64 / 4.0,
                bytes_up: 0,
                bytes_down: 0,
                vectors: 0.0,
                metrics: BTreeMap::from([("stationarity".to_string(), 0.5f64.powi(k as i32))]),
                leak_err: None,
            })
            .collect();
        RunRecord::crafted(point, label, converged, "", trace)
    }

    #[test]
    fn placeholders_print_as_the_claims_evidence_does() {
        let exp = experiment(&["kappa=10", "kappa=100", "kappa=1000"]);
        let runs = vec![
            run("kappa=10", "A", 30, true),
            run("kappa=10", "B", 20, true),
            run("kappa=100", "A", 40, false),
            run("kappa=100", "A", 20, true),
            run("kappa=100", "B", 10, true),
        ];
        let text = "A took {{rounds of A at kappa=10}} rounds ({{ rounds of A / B at kappa=10 }} × B's), \
                    {{stationarity <= 1e-3 of A at kappa=10}} to 1e-3, {{time_s of A at kappa=10}}; \
                    at 100 {{rounds of A at kappa=100}}, ratio {{rounds of A / B at kappa=100}}; \
                    {{rounds of A at kappa=1000}}, {{rounds of A at kappa=5}}.";
        assert_eq!(
            render(&exp, &runs, text),
            "A took 30 rounds (1.50 × B's), 10 to 1e-3, 7.50 s; at 100 ≥ 30 (1 of 2 converged), \
             ratio ≥ 3.00 (1 of 2 converged); (not run), (not in this profile)."
        );
        // Without a sweep, no `at`; a ratio over a capped denominator is undetermined.
        let one = experiment(&["—"]);
        let capped = vec![run("—", "A", 8, true), run("—", "B", 16, false)];
        assert_eq!(
            render(
                &one,
                &capped,
                "{{rounds of A}} / {{rounds of B}} = {{rounds of A / B}}"
            ),
            "8 / ≥ 16 = undetermined (0.50, its denominator a lower bound)"
        );
    }
}
