//! Stopping rules, applied by the runner identically to every method.

use crate::methods::StepInfo;
use crate::problem::Accuracy;
use crate::spec::Kind;
use crate::spec::{StopSpec, Target};

use super::TraceRow;

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// |f_k − f_{k−1}| ≤ tol · f_k (FAPS (27)).
    ObjectiveChange,
    /// The target metric reached its value: "<metric>_target".
    Target(String),
    /// The method's own published criterion held.
    OwnCriterion,
    /// The method has nothing more to do (a one-shot method, or its own iteration cap).
    Done,
    MaxRounds,
    TimeBudget,
    /// A metric or the objective is not finite: the run diverged.
    Diverged,
    /// The method returned an error or panicked mid-run (e.g. a factorisation of a singular
    /// matrix): the run ends there, its trace kept, the message in the record's `error`.
    Failed,
}

impl StopReason {
    pub fn as_str(&self) -> String {
        match self {
            Self::ObjectiveChange => "objective_change".into(),
            Self::Target(m) => format!("{m}_target"),
            Self::OwnCriterion => "own_criterion".into(),
            Self::Done => "done".into(),
            Self::MaxRounds => "max_rounds".into(),
            Self::TimeBudget => "time_budget".into(),
            Self::Diverged => "diverged".into(),
            Self::Failed => "failed".into(),
        }
    }
}

/// The reason [`StopReason::as_str`] wrote (a results folder's `stop_reason`).
impl std::str::FromStr for StopReason {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Ok(match s {
            "objective_change" => Self::ObjectiveChange,
            "own_criterion" => Self::OwnCriterion,
            "done" => Self::Done,
            "max_rounds" => Self::MaxRounds,
            "time_budget" => Self::TimeBudget,
            "diverged" => Self::Diverged,
            "failed" => Self::Failed,
            _ => match s.strip_suffix("_target") {
                Some(m) if !m.is_empty() => Self::Target(m.to_string()),
                _ => return Err(()),
            },
        })
    }
}

/// What a run's end means for its result, derived by [`Status::of`] from its stop reason, the
/// manifest's `[stop]` and its trace, so `dpca render` computes it from committed CSVs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The stop rule's target or the method's own criterion was met, a one-shot method computed
    /// its answer, or — with no target in `[stop]` — the relative objective change (FAPS (27))
    /// fired while the family's accuracy metric was still improving (or at round-off).
    Converged,
    /// The relative objective change fired with the target metric short of `[stop] target`, or,
    /// without a target, with the family's accuracy metric no longer improving: less than
    /// [`MIN_GAIN`] better over the last quarter of the trace ([`Family::accuracy`]). Or the
    /// method's own criterion held with that metric no better than at the run's start (less
    /// than [`MIN_GAIN`] below its first value): a fixed point of the method that is not the
    /// solution, as FSSPCA on one worker settling with ℓ0 = 2.
    ///
    /// [`Family::accuracy`]: crate::problem::Family::accuracy
    Stalled,
    /// Max rounds, the time budget, or the method's own iteration cap before its criterion held.
    Capped,
    Diverged,
    Failed,
}

/// The share by which the accuracy metric must improve over the last quarter of a run's trace
/// for rule (27) to count as converged without a target: one default for every experiment.
pub const MIN_GAIN: f64 = 0.1;
/// Fewest trace rows whose last quarter (2 rows) can show that a metric stopped improving.
const MIN_ROWS: usize = 8;

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Converged => "converged",
            Self::Stalled => "stalled",
            Self::Capped => "capped",
            Self::Diverged => "diverged",
            Self::Failed => "failed",
        }
    }

    /// The status of a run that stopped for `reason` under `stop`, its trace `trace`.
    pub fn of(reason: &StopReason, stop: &StopSpec, kind: Kind, trace: &[TraceRow]) -> Self {
        match reason {
            StopReason::ObjectiveChange => match &stop.target {
                Some(t) if !trace.last().is_some_and(|last| reached(t, kind, last)) => {
                    Self::Stalled
                }
                Some(_) => Self::Converged,
                None if stopped_improving(kind, trace) => Self::Stalled,
                None => Self::Converged,
            },
            // Under `own_criterion`, a method that is done without its criterion holding (checked
            // first) ran out of its own iterations (DCF-PCA's epochs); without it, `done` is a
            // one-shot method's answer or a schedule the manifest chose to run in full.
            StopReason::Done if stop.own_criterion => Self::Capped,
            // A criterion on the iterates' change holds at any fixed point: the run converged
            // only if it got somewhere (its accuracy below its start), else it stalled.
            StopReason::OwnCriterion if stuck_at_start(kind, trace) => Self::Stalled,
            StopReason::Done | StopReason::OwnCriterion | StopReason::Target(_) => Self::Converged,
            StopReason::MaxRounds | StopReason::TimeBudget => Self::Capped,
            StopReason::Diverged => Self::Diverged,
            StopReason::Failed => Self::Failed,
        }
    }
}

/// The accuracy metric that judges a run: the first of the family's ([`Family::accuracy`]) the
/// trace defines at its end (a NaN metric, such as the sparse family's stationarity without
/// `mu`, is not this run's). None: no such metric.
///
/// [`Family::accuracy`]: crate::problem::Family::accuracy
pub fn accuracy_of(kind: Kind, trace: &[TraceRow]) -> Option<Accuracy> {
    let last = trace.last()?;
    crate::problem::family(kind)
        .accuracy()
        .iter()
        .copied()
        .find(|a| last.metric(a.metric).is_some_and(f64::is_finite))
}

/// The run's values of its accuracy metric, row by row (NaN where a row lacks it).
fn accuracy_values(kind: Kind, trace: &[TraceRow]) -> Option<(Accuracy, Vec<f64>)> {
    let acc = accuracy_of(kind, trace)?;
    let values = trace
        .iter()
        .map(|t| t.metric(acc.metric).unwrap_or(f64::NAN))
        .collect();
    Some((acc, values))
}

/// Whether the run's accuracy metric ended no better than it began: less than [`MIN_GAIN`]
/// below its first finite value, and not at round-off; a short trace never is, as in
/// [`stopped_improving`]. Where a method's own criterion (a small
/// change of its iterates) held, this tells a fixed point that is not the solution from one that
/// is: the window of [`stopped_improving`] would miss a run that wandered before it settled
/// (FSSPCA at λ1 = 20 on one worker, recovery 1.8–3.8 over its last quarter, then 3.6).
pub fn stuck_at_start(kind: Kind, trace: &[TraceRow]) -> bool {
    let Some((acc, values)) = accuracy_values(kind, trace) else {
        return false;
    };
    if values.len() < MIN_ROWS {
        return false;
    }
    let first = values.iter().copied().find(|v| v.is_finite());
    let last = values.last().copied();
    matches!((first, last), (Some(f), Some(l)) if l > acc.solved && l >= (1.0 - MIN_GAIN) * f)
}

impl Status {
    /// The accuracy metric a run's status is judged by ([`accuracy_of`]).
    pub fn judged_by(kind: Kind, trace: &[TraceRow]) -> Option<Accuracy> {
        accuracy_of(kind, trace)
    }
}

/// Whether the family's accuracy metric stopped improving: over the last quarter of the trace
/// its best value is less than [`MIN_GAIN`] below its value where that quarter starts, and the
/// run is not at round-off. A short trace, or a metric this run does not define (NaN), never is.
pub fn stopped_improving(kind: Kind, trace: &[TraceRow]) -> bool {
    let Some((acc, values)) = accuracy_values(kind, trace) else {
        return false;
    };
    if values.len() < MIN_ROWS {
        return false;
    }
    let quarter = &values[values.len() * 3 / 4..];
    let (start, last) = (quarter[0], quarter[quarter.len() - 1]);
    if !(start.is_finite() && last.is_finite()) || last <= acc.solved {
        return false;
    }
    let best = quarter
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    best >= (1.0 - MIN_GAIN) * start
}

/// Whether `last` meets the target; a missing or NaN metric never does.
fn reached(t: &Target, kind: Kind, last: &TraceRow) -> bool {
    let lower = crate::problem::metric(kind, &t.metric).is_none_or(|m| m.lower_is_better);
    last.metric(&t.metric)
        .is_some_and(|v| meets(v, t.value, lower))
}

/// `v` at or beyond `target`: at or below it if lower is better.
fn meets(v: f64, target: f64, lower_is_better: bool) -> bool {
    if lower_is_better {
        v <= target
    } else {
        v >= target
    }
}

/// Tracks the quantities the rules need across rounds.
pub struct StopRule<'a> {
    spec: &'a StopSpec,
    /// Index of the target metric in the family's metrics, and whether lower is better.
    target: Option<(usize, bool)>,
    last_objective: Option<f64>,
    /// Metrics the instance defines (None: all); the others are NaN by design.
    applicable: Option<Vec<bool>>,
}

impl<'a> StopRule<'a> {
    pub fn new(spec: &'a StopSpec, kind: Kind) -> Self {
        let target = spec.target.as_ref().map(|t| {
            let i = crate::problem::family(kind)
                .metrics()
                .iter()
                .position(|m| m.name == t.metric)
                .expect("validated: the target names a metric of the family");
            (i, crate::problem::family(kind).metrics()[i].lower_is_better)
        });
        Self {
            spec,
            target,
            last_objective: None,
            applicable: None,
        }
    }

    /// The target (metric, value, lower is better), for the progress display's rate.
    pub fn target(&self) -> Option<(&'a str, f64, bool)> {
        let spec: &'a StopSpec = self.spec;
        let t = spec.target.as_ref()?;
        Some((t.metric.as_str(), t.value, self.target?.1))
    }

    /// Only the metrics marked true are checked for divergence.
    pub fn with_applicable(mut self, applicable: Option<Vec<bool>>) -> Self {
        self.applicable = applicable;
        self
    }

    /// Decide after `round` rounds. `info` is what the method reported this step; `metrics` the
    /// observer's values (family order); `seconds` the method's cumulative time.
    pub fn check(
        &mut self,
        round: usize,
        info: &StepInfo,
        metrics: &[f64],
        seconds: f64,
    ) -> Option<StopReason> {
        let objective = info.objective;
        let defined = |i: usize| self.applicable.as_ref().is_none_or(|a| a[i]);
        if metrics
            .iter()
            .enumerate()
            .filter(|(i, _)| defined(*i))
            .map(|(_, v)| v)
            .chain(objective.as_ref())
            .any(|v| !v.is_finite())
        {
            return Some(StopReason::Diverged);
        }
        let prev = std::mem::replace(&mut self.last_objective, objective);
        if let (Some(tol), Some(f), Some(f_prev)) = (self.spec.objective_tol, objective, prev) {
            if (f - f_prev).abs() <= tol * f.abs() {
                return Some(StopReason::ObjectiveChange);
            }
        }
        if let (Some(t), Some((i, lower))) = (&self.spec.target, self.target) {
            if meets(metrics[i], t.value, lower) {
                return Some(StopReason::Target(t.metric.clone()));
            }
        }
        if self.spec.own_criterion && info.converged {
            return Some(StopReason::OwnCriterion);
        }
        if info.done {
            return Some(StopReason::Done);
        }
        if round >= self.spec.max_rounds {
            return Some(StopReason::MaxRounds);
        }
        if self.spec.time_budget_s.is_some_and(|t| seconds >= t) {
            return Some(StopReason::TimeBudget);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(target: Option<(&str, f64)>, own_criterion: bool) -> StopSpec {
        StopSpec {
            max_rounds: 10,
            objective_tol: Some(1e-3),
            target: target.map(|(metric, value)| Target {
                metric: metric.into(),
                value,
            }),
            own_criterion,
            time_budget_s: None,
        }
    }

    fn row(metrics: &[(&str, f64)]) -> TraceRow {
        TraceRow::at_start(metrics.iter().map(|&(k, v)| (k.to_string(), v)).collect())
    }

    /// Drive the rule with a flat objective and a constant KKT until it fires: the reason, and
    /// the status it gives.
    fn run(spec: &StopSpec, kkt: f64, objective: Option<f64>) -> (StopReason, Status) {
        let mut rule = StopRule::new(spec, Kind::Subspace);
        let names: Vec<&str> = crate::problem::family(Kind::Subspace)
            .metrics()
            .iter()
            .map(|m| m.name)
            .collect();
        let metrics: Vec<f64> = names
            .iter()
            .map(|&n| if n == "kkt" { kkt } else { 1.0 })
            .collect();
        let info = StepInfo {
            objective,
            ..StepInfo::default()
        };
        let last = row(&names
            .iter()
            .copied()
            .zip(metrics.iter().copied())
            .collect::<Vec<_>>());
        for round in 1.. {
            if let Some(r) = rule.check(round, &info, &metrics, 0.0) {
                let s = Status::of(&r, spec, Kind::Subspace, std::slice::from_ref(&last));
                return (r, s);
            }
        }
        unreachable!()
    }

    #[test]
    fn a_flat_objective_with_kkt_above_its_target_stalls() {
        let spec = stop(Some(("kkt", 1e-5)), false);
        assert_eq!(
            run(&spec, 4.7e-5, Some(2.0)),
            (StopReason::ObjectiveChange, Status::Stalled)
        );
        // Rule (27) firing as the target is met (it is checked first) has converged.
        let met = row(&[("kkt", 1e-6)]);
        assert_eq!(
            Status::of(&StopReason::ObjectiveChange, &spec, Kind::Subspace, &[met]),
            Status::Converged
        );
        // Without a target, rule (27) is the paper's own: converged by it unless the trace shows
        // a plateau (one row here shows none; see the plateau test below).
        assert_eq!(
            run(&stop(None, false), 4.7e-5, Some(2.0)).1,
            Status::Converged
        );
        // A NaN target metric never meets it.
        let r = row(&[("kkt", f64::NAN)]);
        assert_eq!(
            Status::of(&StopReason::ObjectiveChange, &spec, Kind::Subspace, &[r]),
            Status::Stalled
        );
    }

    /// A subspace trace of `n` rows whose KKT is `kkt(round)`.
    fn trace(n: u64, kkt: impl Fn(u64) -> f64) -> Vec<TraceRow> {
        (0..n)
            .map(|k| {
                let mut t = row(&[("kkt", kkt(k))]);
                t.round = k;
                t
            })
            .collect()
    }

    #[test]
    fn without_a_target_rule_27_on_a_plateau_stalls() {
        let of = |spec: &StopSpec, t: &[TraceRow]| {
            Status::of(&StopReason::ObjectiveChange, spec, Kind::Subspace, t)
        };
        let none = stop(None, false);
        // FAPS fig. 4 at κ = 10: down to 4.7e-6, then flat for the last half of the run.
        let plateau = trace(400, |k| 4.7e-6 * (1.0 + 0.5f64.powi(k.min(200) as i32)));
        assert_eq!(of(&none, &plateau), Status::Stalled);
        assert!(stopped_improving(Kind::Subspace, &plateau));
        // SSI: geometric to the end (0.996 per round: 87 % better over the last 500 rounds).
        let geometric = trace(2000, |k| 2e-3 * 0.996f64.powi(k as i32));
        assert_eq!(of(&none, &geometric), Status::Converged);
        // Improving by 9 % over the last quarter is not enough; by 11 % is.
        let slow = |gain: f64| {
            trace(100, move |k| {
                if k < 75 {
                    1e-3
                } else {
                    1e-3 * (1.0 - gain * (k - 75) as f64 / 24.0)
                }
            })
        };
        assert_eq!(of(&none, &slow(0.09)), Status::Stalled);
        assert_eq!(of(&none, &slow(0.11)), Status::Converged);
        // At round-off a flat metric is at the solution.
        assert_eq!(of(&none, &trace(100, |_| 1e-13)), Status::Converged);
        // A target met decides, plateau or not.
        let target = stop(Some(("kkt", 1e-5)), false);
        assert_eq!(of(&target, &plateau), Status::Converged);
        // A short trace or a metric the run lacks shows no plateau.
        assert_eq!(of(&none, &plateau[..5]), Status::Converged);
        assert_eq!(of(&none, &trace(100, |_| f64::NAN)), Status::Converged);
    }

    /// A sparse trace on planted data (no `mu`: stationarity NaN) whose recovery error is
    /// `rec(round)`.
    fn sparse(n: u64, rec: impl Fn(u64) -> f64) -> Vec<TraceRow> {
        (0..n)
            .map(|k| {
                let mut t = row(&[("stationarity", f64::NAN), ("recovery", rec(k))]);
                t.round = k;
                t
            })
            .collect()
    }

    #[test]
    fn an_own_criterion_held_no_better_than_the_start_stalls() {
        let own = StopSpec {
            objective_tol: None,
            ..stop(None, true)
        };
        let of = |t: &[TraceRow]| Status::of(&StopReason::OwnCriterion, &own, Kind::Sparse, t);
        // FSSPCA on one worker (fspca fig3, K = 1): from the zero start's 2.0 down, then up to a
        // fixed point at 3.6 (ℓ0 = 2), where its criterion holds.
        let worse = sparse(200, |k| if k < 10 { 2.0 - 0.1 * k as f64 } else { 3.6 });
        assert_eq!(of(&worse), Status::Stalled);
        // The same fixed point reached after wandering: the last quarter's best (1.8) is far
        // below its start (3.8), so no window shows a plateau; the start decides.
        let wandered = sparse(400, |k| match k {
            0 => 2.0,
            1..=309 => 3.8,
            310..=349 => 1.8,
            _ => 3.6,
        });
        assert!(!stopped_improving(Kind::Sparse, &wandered));
        assert_eq!(of(&wandered), Status::Stalled);
        // A loading lost (2.0, as at the start): stalled too; 9 % better is still no progress.
        assert_eq!(of(&sparse(100, |_| 2.0)), Status::Stalled);
        assert_eq!(
            of(&sparse(100, |k| if k == 0 { 2.0 } else { 1.82 })),
            Status::Stalled
        );
        // Genuinely converged runs plateau too (that is what the criterion detects), far below
        // their start: converged.
        let converged = sparse(100, |k| {
            if k < 20 {
                2.0 * 0.5f64.powi(k as i32)
            } else {
                1e-4
            }
        });
        assert_eq!(of(&converged), Status::Converged);
        // The metric judged is the first the run defines: stationarity where it is finite.
        let dssal1: Vec<TraceRow> = (0..50)
            .map(|k| row(&[("stationarity", 1e-3 * 0.5f64.powi(k)), ("recovery", 2.0)]))
            .collect();
        assert_eq!(of(&dssal1), Status::Converged);
        assert_eq!(
            Status::judged_by(Kind::Sparse, &dssal1).map(|a| a.metric),
            Some("stationarity")
        );
        // Without a metric measuring the distance to the solution (real data), or on a short
        // trace, nothing changes.
        assert_eq!(of(&sparse(100, |_| f64::NAN)), Status::Converged);
        assert_eq!(of(&worse[..5]), Status::Converged);
    }

    #[test]
    fn a_run_at_the_cap_is_capped() {
        // No objective: rule (27) cannot fire, the KKT never reaches its target.
        let spec = stop(Some(("kkt", 1e-5)), false);
        assert_eq!(
            run(&spec, 1e-3, None),
            (StopReason::MaxRounds, Status::Capped)
        );
        let last = row(&[("kkt", 1e-3)]);
        let of = |r: StopReason, own| {
            Status::of(
                &r,
                &stop(None, own),
                Kind::Subspace,
                std::slice::from_ref(&last),
            )
        };
        assert_eq!(of(StopReason::TimeBudget, false), Status::Capped);
        // A method done before its criterion held ran out of its own iterations...
        assert_eq!(of(StopReason::Done, true), Status::Capped);
        // ... while without the criterion asked for, done is a one-shot method's answer.
        assert_eq!(of(StopReason::Done, false), Status::Converged);
        assert_eq!(of(StopReason::OwnCriterion, true), Status::Converged);
        assert_eq!(of(StopReason::Diverged, false), Status::Diverged);
        assert_eq!(of(StopReason::Failed, false), Status::Failed);
    }

    #[test]
    fn a_higher_is_better_target_is_met_from_above() {
        let spec = stop(Some(("consensus", 0.9)), false);
        let of = |v: f64| {
            Status::of(
                &StopReason::ObjectiveChange,
                &spec,
                Kind::Sparse,
                &[row(&[("consensus", v)])],
            )
        };
        assert_eq!(of(0.95), Status::Converged);
        assert_eq!(of(0.5), Status::Stalled);
    }

    #[test]
    fn every_stop_reason_reads_back() {
        for r in [
            StopReason::ObjectiveChange,
            StopReason::Target("log_err".into()),
            StopReason::OwnCriterion,
            StopReason::Done,
            StopReason::MaxRounds,
            StopReason::TimeBudget,
            StopReason::Diverged,
            StopReason::Failed,
        ] {
            assert_eq!(r.as_str().parse::<StopReason>(), Ok(r));
        }
        assert!("_target".parse::<StopReason>().is_err());
        assert!("stalled".parse::<StopReason>().is_err());
    }
}
