//! Observers: what watches a run from outside its timed part. The runner records each round's
//! row (the network's counts and the family's metrics, which the stop rule reads), then hands it
//! to every observer; after the last round each may add to the whole trace. The progress bar,
//! the leakage attack and the unscaled norms of FAPS fig. 1 are observers; a new measurement of
//! a run is one more.

use super::TraceRow;
use crate::attack;
use crate::data::matrix::Block;
use crate::fed::{RunNetwork, Shape};
use crate::progress::RoundProgress;
use crate::spec::{AttackSpec, LEAK_ABS};
use anyhow::Result;
use ndarray::ArrayView2;

/// Watches a run: never inside the timed part, never seen by the method.
pub trait Observe {
    /// After each round, with the row just recorded.
    fn round(&mut self, _row: &TraceRow) {}
    /// After the last round: the whole trace, and the network the run went through.
    fn finish(&mut self, _trace: &mut [TraceRow], _net: &dyn RunNetwork) -> Result<()> {
        Ok(())
    }
}

/// The run's progress bar: the round, two metrics, and the stop target's metric.
pub struct Bar<'a> {
    pub bar: RoundProgress,
    /// Two metrics for the log line of a row.
    pub headline: &'a dyn Fn(&TraceRow) -> String,
    /// The stop target's metric, if the stop rule has one.
    pub target: Option<&'a str>,
}

impl Observe for Bar<'_> {
    fn round(&mut self, row: &TraceRow) {
        let value = self.target.and_then(|m| row.metric(m));
        self.bar.update(row.round, &(self.headline)(row), value);
    }
    fn finish(&mut self, _: &mut [TraceRow], _: &dyn RunNetwork) -> Result<()> {
        self.bar.finish();
        Ok(())
    }
}

/// The leakage attack (FAPS §3.5) on one client's transcript, read after the run: the relative
/// error per round in `leak_err`, and with `[attack] unscaled` the absolute one in `leak_abs`.
pub struct Leakage<'a> {
    pub spec: &'a AttackSpec,
    /// 0-based.
    pub client: usize,
    /// The attacked client's data A_1, which the attack's error compares with.
    pub a1: ArrayView2<'a, f64>,
    pub shape: Shape,
    pub params: &'a serde_json::Value,
}

impl<'a> Leakage<'a> {
    /// The attack of `spec` on `blocks` (the clients' data), or None without one. The attack
    /// compares with A_1A_1ᵀ, which it needs dense (n × n at most): sparse data is an error.
    pub fn prepare(
        spec: Option<&'a AttackSpec>,
        blocks: &[Block<'a>],
        shape: Shape,
        params: &'a serde_json::Value,
        what: &str,
    ) -> Result<Option<Self>> {
        let Some(spec) = spec else {
            return Ok(None);
        };
        let client = spec.client - 1;
        let a1 = blocks
            .get(client)
            .and_then(|b| b.as_dense())
            .ok_or_else(|| {
                anyhow::anyhow!("the leakage attack needs dense data; {what} is sparse")
            })?;
        Ok(Some(Self {
            spec,
            client,
            a1,
            shape,
            params,
        }))
    }

    /// Ask `net` to keep the attacked client's transcript (the rounds the attack reads).
    pub fn record(&self, net: &mut dyn RunNetwork) {
        net.record_transcript(vec![self.client], self.spec.max_rounds);
    }
}

impl Observe for Leakage<'_> {
    fn finish(&mut self, trace: &mut [TraceRow], net: &dyn RunNetwork) -> Result<()> {
        let Some(t) = net.transcript() else {
            return Ok(());
        };
        let max = self.spec.max_rounds.unwrap_or(usize::MAX);
        let leak = attack::leak(self.shape, self.params, t, self.client, max)?;
        let errors = leak.norms(self.a1, max)?;
        for ((round, ..), err) in leak.pairs.iter().zip(errors) {
            if let Some(row) = trace.get_mut(*round) {
                row.leak_err = Some(err.relative);
                if self.spec.unscaled {
                    row.metrics.insert(LEAK_ABS.into(), err.absolute);
                }
            }
        }
        Ok(())
    }
}

/// A metric the family scales by ‖A‖²_F, written unscaled beside it (FAPS fig. 1 prints the
/// KKT violation so): `unscaled` = `metric` × ‖A‖²_F in every row.
pub struct Unscaled {
    pub metric: &'static str,
    pub unscaled: &'static str,
    pub fro2: f64,
}

impl Unscaled {
    pub fn of(data: Block, metric: &'static str, unscaled: &'static str) -> Self {
        Self {
            metric,
            unscaled,
            fro2: data.fro2(),
        }
    }
}

impl Observe for Unscaled {
    fn finish(&mut self, trace: &mut [TraceRow], _: &dyn RunNetwork) -> Result<()> {
        for row in trace {
            let v = row.metrics.get(self.metric).copied().unwrap_or(f64::NAN);
            row.metrics.insert(self.unscaled.into(), v * self.fro2);
        }
        Ok(())
    }
}
