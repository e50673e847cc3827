//! What the report reads off a method's runs, shared by the claims' verdicts, the placeholders
//! of the prose, the scorecard's "ours" and report.md's tables, so all print one number the same
//! way: `rounds`, `time_s`, `vectors`, `comm_vectors`, a metric's final value, the rounds until a
//! metric first is ≤ a value, or an entry of a spectrum; its mean over repeats, and whether it
//! is only a lower bound ("≥ N").

use crate::run::RunRecord;
use crate::spec::Experiment;

/// What is measured on one run: `name` (one of [`crate::spec::RUN_QUANTITIES`], a metric,
/// `leak_err`, or with `entry` a spectrum), or with `reach` the rounds until that metric first
/// is at or below it; `relative`: the metric divided by its first finite value in the trace;
/// `ratio`: printed as a ratio of two methods' values.
#[derive(Clone, Copy)]
pub struct Quantity<'a> {
    pub name: &'a str,
    pub reach: Option<f64>,
    pub relative: bool,
    pub ratio: bool,
    /// The entry (0-based) of the spectrum `name` the run records (spectra.csv).
    pub entry: Option<usize>,
}

impl<'a> Quantity<'a> {
    pub fn of(name: &'a str, reach: Option<f64>) -> Self {
        Quantity {
            name,
            reach,
            relative: false,
            ratio: false,
            entry: None,
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

/// A run's value of `q`, and whether it is only a lower bound (the rounds or vectors of a run
/// that did not converge, the rounds of one that never reached `reach`). A metric's value is
/// the one of the last row that records it (the attack records only the rounds it read); None
/// when that is not finite (a metric this run does not define, or a diverged run): a run with
/// no final value supports nothing.
pub fn value(r: &RunRecord, q: Quantity) -> Option<(f64, bool)> {
    let spent = !r.converged;
    match q.name {
        "rounds" => return Some((r.rounds as f64, spent)),
        "time_s" => return Some((r.trace.last()?.time_s, false)),
        "vectors" => return Some((r.trace.last()?.vectors, spent)),
        "comm_vectors" => {
            let last = r.trace.last()?;
            let clients = r.bytes_up_per_client.len();
            return Some((super::figures::comm_vectors(last, clients), spent));
        }
        _ => {}
    }
    let finite = |v: &f64| v.is_finite();
    if let Some(i) = q.entry {
        return r
            .spectra
            .get(q.name)?
            .get(i)
            .copied()
            .filter(finite)
            .map(|v| (v, false));
    }
    let m = q.name;
    let scale = if q.relative { start(r, m)? } else { 1.0 };
    let Some(v) = q.reach else {
        let last = r.trace.iter().rev().find_map(|t| t.metric(m))?;
        return Some(last / scale).filter(finite).map(|v| (v, false));
    };
    if let Some(t) = r
        .trace
        .iter()
        .find(|t| t.metric(m).is_some_and(|x| x / scale <= v))
    {
        return Some((t.round as f64, false));
    }
    // Not reached: known only to lie beyond the last round the metric was measured at (an
    // attack reads only the first rounds of a run), not beyond the run's end.
    let last = r
        .trace
        .iter()
        .rev()
        .find(|t| t.metric(m).is_some_and(|x| x.is_finite()))?;
    Some((last.round as f64, true))
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

/// The mean of `who`'s values (as `Experiment::names_run` reads it) at `point` (None without
/// runs that give one).
pub fn mean(
    exp: &Experiment,
    records: &[RunRecord],
    point: &str,
    who: &str,
    q: Quantity,
) -> Option<Mean> {
    mean_of(runs_at(exp, records, point, who), q)
}

/// The mean of the values `runs` give (None when none gives one).
pub fn mean_of<'r>(runs: impl IntoIterator<Item = &'r RunRecord>, q: Quantity) -> Option<Mean> {
    let vals: Vec<(f64, bool)> = runs.into_iter().filter_map(|r| value(r, q)).collect();
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

/// "258", "7.8" (a mean over repeats), "≥ 258 (3 of 5 reached)", "0.45" for a ratio,
/// "undetermined (0.45, its denominator a lower bound)".
pub fn show(m: Mean, q: Quantity) -> String {
    let num = if q.ratio {
        format!("{:.2}", m.value)
    } else if q.counts_rounds() && m.value.fract() == 0.0 {
        format!("{:.0}", m.value)
    } else if q.counts_rounds() {
        // A mean over repeats: "7.8", not a count rounded to the paper's.
        format!("{:.1}", m.value)
    } else if q.name == "time_s" {
        format!("{:.2} s", m.value)
    } else if q.name.ends_with("vectors") {
        format!("{:.1}", m.value)
    } else if q.entry.is_some() {
        format!("{:.3}", m.value)
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
