//! Stopping rules, applied by the runner identically to every method.

use crate::methods::StepInfo;
use crate::spec::Kind;
use crate::spec::StopSpec;

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
    /// Did the run meet its accuracy criterion (rather than run out of rounds or time)?
    pub fn converged(&self) -> bool {
        matches!(
            self,
            Self::ObjectiveChange | Self::Target(_) | Self::OwnCriterion
        )
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
            if (lower && metrics[i] <= t.value) || (!lower && metrics[i] >= t.value) {
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
