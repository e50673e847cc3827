//! Stopping rules, applied by the runner identically to every method.

use crate::manifest::StopSpec;

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// |f_k − f_{k−1}| ≤ tol · f_k (FAPS (27)).
    ObjectiveChange,
    KktTarget,
    MaxRounds,
    TimeBudget,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ObjectiveChange => "objective_change",
            Self::KktTarget => "kkt_target",
            Self::MaxRounds => "max_rounds",
            Self::TimeBudget => "time_budget",
        }
    }
    /// Did the run meet its accuracy criterion (rather than run out of rounds or time)?
    pub fn converged(self) -> bool {
        matches!(self, Self::ObjectiveChange | Self::KktTarget)
    }
}

/// Tracks the quantities the rules need across rounds.
pub struct StopRule<'a> {
    spec: &'a StopSpec,
    last_objective: Option<f64>,
}

impl<'a> StopRule<'a> {
    pub fn new(spec: &'a StopSpec) -> Self {
        Self {
            spec,
            last_objective: None,
        }
    }

    /// Decide after `round` rounds. `objective` is what the method learned in-protocol this
    /// round; `kkt` is the observer's metric; `seconds` the method's cumulative time.
    pub fn check(
        &mut self,
        round: usize,
        objective: Option<f64>,
        kkt: f64,
        seconds: f64,
    ) -> Option<StopReason> {
        let prev = std::mem::replace(&mut self.last_objective, objective);
        if let (Some(tol), Some(f), Some(f_prev)) = (self.spec.objective_tol, objective, prev) {
            if (f - f_prev).abs() <= tol * f.abs() {
                return Some(StopReason::ObjectiveChange);
            }
        }
        if self.spec.kkt_target.is_some_and(|t| kkt <= t) {
            return Some(StopReason::KktTarget);
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
