//! What the report reads off a method's runs at a sweep point, shared by the claims' verdicts
//! and the placeholders of the prose, so both print a number the same way: `rounds`, `time_s`,
//! a metric's last finite value, or the rounds until a metric first is ≤ a value; its mean over
//! repeats, and whether it is only a lower bound ("≥ N").

use crate::run::RunRecord;
use crate::spec::Experiment;

/// What is measured on one run: `name` (`rounds`, `time_s`, a metric, `leak_err`), or with
/// `reach` the rounds until that metric first is at or below it; `relative`: the metric divided
/// by its first finite value in the trace; `ratio`: printed as a ratio of two methods' values.
#[derive(Clone, Copy)]
pub struct Quantity<'a> {
    pub name: &'a str,
    pub reach: Option<f64>,
    pub relative: bool,
    pub ratio: bool,
}

impl<'a> Quantity<'a> {
    pub fn of(name: &'a str, reach: Option<f64>) -> Self {
        Quantity {
            name,
            reach,
            relative: false,
            ratio: false,
        }
    }

    pub fn counts_rounds(&self) -> bool {
        self.name == "rounds" || self.reach.is_some()
    }

    /// "rounds to kkt ≤ 1e-5", "kkt / its start".
    pub fn text(&self) -> String {
        let name = if self.relative {
            format!("{} / its start", self.name)
        } else {
            self.name.to_string()
        };
        match self.reach {
            Some(v) => format!("rounds to {name} ≤ {v:e}"),
            None => name,
        }
    }
}

/// The first finite value of metric `m` in the run's trace (what `relative` divides by).
pub fn start(r: &RunRecord, m: &str) -> Option<f64> {
    r.trace
        .iter()
        .find_map(|t| t.metric(m).filter(|v| v.is_finite()))
}

/// A run's value of `q`, and whether it is only a lower bound (rounds of a run that did not
/// converge or never reached `reach`).
pub fn value(r: &RunRecord, q: Quantity) -> Option<(f64, bool)> {
    let scale = match q.name {
        "rounds" | "time_s" => 1.0,
        m if q.relative => start(r, m)?,
        _ => 1.0,
    };
    match (q.name, q.reach) {
        ("rounds", _) => Some((r.rounds as f64, !r.converged)),
        ("time_s", _) => Some((r.trace.last()?.time_s, false)),
        (m, Some(v)) => {
            if let Some(t) = r
                .trace
                .iter()
                .find(|t| t.metric(m).is_some_and(|x| x / scale <= v))
            {
                return Some((t.round as f64, false));
            }
            // Not reached: known only to lie beyond the last round the metric was measured at
            // (an attack reads only the first rounds of a run), not beyond the run's end.
            let last = r
                .trace
                .iter()
                .rev()
                .find(|t| t.metric(m).is_some_and(|x| x.is_finite()))?;
            Some((last.round as f64, true))
        }
        (m, None) => r
            .trace
            .iter()
            .rev()
            .find_map(|t| t.metric(m).filter(|v| v.is_finite()))
            .map(|v| (v / scale, false)),
    }
}

/// The mean of a quantity over runs, how many of them gave only a lower bound, and whether it
/// is undetermined (a ratio over a bound).
#[derive(Clone, Copy, Debug)]
pub struct Mean {
    pub value: f64,
    pub bounds: usize,
    pub runs: usize,
    pub undetermined: bool,
}

impl Mean {
    pub fn bound(&self) -> bool {
        self.bounds > 0
    }

    /// The interval the true value lies in: exact, from a lower bound up, or anything.
    pub fn range(&self) -> (f64, f64) {
        if self.undetermined {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else if self.bound() {
            (self.value, f64::INFINITY)
        } else {
            (self.value, self.value)
        }
    }

    /// `self / den`: a lower bound over an exact value is a lower bound; a bound in the
    /// denominator could make the ratio anything below, so it is undetermined.
    pub fn over(self, den: Mean) -> Mean {
        Mean {
            value: self.value / den.value,
            undetermined: self.undetermined || den.undetermined || den.bound(),
            ..self
        }
    }
}

/// Mean value of `who` (as `Experiment::names_run` reads it) at `point` over its runs (None
/// without runs).
/// The runs of `who` (as `Experiment::names_run` reads it) at `point`.
pub fn runs_at<'a>(
    exp: &'a Experiment,
    records: &'a [RunRecord],
    point: &'a str,
    who: &'a str,
) -> impl Iterator<Item = &'a RunRecord> {
    records.iter().filter(move |r| {
        r.key.point == point && exp.names_run(who, &r.key.method, &r.key.label, &r.key.params)
    })
}

pub fn mean(
    exp: &Experiment,
    records: &[RunRecord],
    point: &str,
    who: &str,
    q: Quantity,
) -> Option<Mean> {
    let vals: Vec<(f64, bool)> = runs_at(exp, records, point, who)
        .filter_map(|r| value(r, q))
        .collect();
    if vals.is_empty() {
        return None;
    }
    Some(Mean {
        value: vals.iter().map(|v| v.0).sum::<f64>() / vals.len() as f64,
        bounds: vals.iter().filter(|v| v.1).count(),
        runs: vals.len(),
        undetermined: false,
    })
}

/// "258", "≥ 258 (3 of 5 reached)", "0.45" for a ratio, "undetermined (0.45, its denominator a
/// lower bound)".
pub fn show(m: Mean, q: Quantity) -> String {
    let num = if q.ratio {
        format!("{:.2}", m.value)
    } else if q.counts_rounds() {
        format!("{:.0}", m.value)
    } else if q.name == "time_s" {
        format!("{:.2} s", m.value)
    } else {
        format!("{:.3e}", m.value)
    };
    let shown = match (m.bound(), m.runs) {
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
    };
    if m.undetermined {
        format!("undetermined ({shown}, its denominator a lower bound)")
    } else {
        shown
    }
}
