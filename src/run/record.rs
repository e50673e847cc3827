//! What a finished run leaves behind: its trace and summary, stored per run so an interrupted
//! experiment resumes where it stopped. serde_json's `float_roundtrip` feature is what makes a
//! loaded run print the same CSV as a fresh one (its default parser can be 1 ulp off).

use super::stop::{Status, StopReason};
use crate::spec::{Kind, StopSpec, LEAK_ERR};
use crate::util::atomic_write;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of trace.csv: the state after `round` communication rounds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceRow {
    pub round: u64,
    /// Mean inner iterations per client in this round (0 without an inner solver).
    pub inner_iters: f64,
    /// Cumulative seconds spent inside the method (metrics excluded).
    pub time_s: f64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// dim-vectors sent both ways: (bytes_up + bytes_down) / (8·dim), never rounded.
    pub vectors: f64,
    /// The problem family's metrics by name (NaN where a metric does not apply); with
    /// `[attack] unscaled`, also `kkt_abs` and (attacked rounds) `leak_abs`.
    #[serde(with = "nonfinite")]
    pub metrics: BTreeMap<String, f64>,
    /// Relative error of the leakage attack after this round (when the manifest asks for it).
    #[serde(default)]
    pub leak_err: Option<f64>,
}

impl TraceRow {
    /// Round 0 before anything ran: nothing sent, nothing timed, these metrics.
    pub fn at_start(metrics: BTreeMap<String, f64>) -> Self {
        Self {
            round: 0,
            inner_iters: 0.0,
            time_s: 0.0,
            bytes_up: 0,
            bytes_down: 0,
            vectors: 0.0,
            metrics,
            leak_err: None,
        }
    }

    /// A metric of the family, or the attack's `leak_err`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        if name == LEAK_ERR {
            return self.leak_err;
        }
        self.metrics.get(name).copied()
    }
}

/// JSON has no NaN or ±∞ (serde_json writes null, which does not read back as f64): stored
/// runs spell them "NaN", "inf", "-inf", so a resumed run prints the same CSV as a fresh one.
mod nonfinite {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Num {
        Finite(f64),
        Tag(String),
    }

    fn to_num(v: f64) -> Num {
        match v {
            v if v.is_finite() => Num::Finite(v),
            v if v.is_nan() => Num::Tag("NaN".into()),
            v if v > 0.0 => Num::Tag("inf".into()),
            _ => Num::Tag("-inf".into()),
        }
    }

    fn from_num<E: Error>(n: Num) -> Result<f64, E> {
        match n {
            Num::Finite(v) => Ok(v),
            Num::Tag(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(E::custom(format!(
                    "{t:?} is not a number (expected NaN, inf or -inf)"
                ))),
            },
        }
    }

    pub fn serialize<S: Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
        let tagged: BTreeMap<&String, Num> = m.iter().map(|(k, v)| (k, to_num(*v))).collect();
        tagged.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
        BTreeMap::<String, Num>::deserialize(d)?
            .into_iter()
            .map(|(k, n)| Ok((k, from_num(n)?)))
            .collect()
    }

    pub mod vecs {
        use super::*;

        pub fn serialize<S: Serializer>(
            m: &BTreeMap<String, Vec<f64>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            let tagged: BTreeMap<&String, Vec<Num>> = m
                .iter()
                .map(|(k, v)| (k, v.iter().map(|x| to_num(*x)).collect()))
                .collect();
            tagged.serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<BTreeMap<String, Vec<f64>>, D::Error> {
            BTreeMap::<String, Vec<Num>>::deserialize(d)?
                .into_iter()
                .map(|(k, v)| Ok((k, v.into_iter().map(from_num).collect::<Result<_, _>>()?)))
                .collect()
        }
    }
}

/// Identity of a run within an experiment.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunKey {
    pub point: String,
    pub method: String,
    pub label: String,
    pub params: String,
    pub seed: u64,
    /// Hash of everything that determines the run (data, partition, problem, stop rule,
    /// method parameters, attack): a stored run is reused only if the manifest still says the same.
    pub fingerprint: String,
}

impl RunKey {
    /// File-name-safe, unique within the experiment: labels are unique within a manifest, and two
    /// entries of one method may differ in fixed parameters, so the label (not the method) names it.
    pub fn file_stem(&self) -> String {
        safe_stem(&format!(
            "{}__{}__{}__{}",
            self.point, self.label, self.params, self.seed
        ))
    }

    /// The run_id column joining summary.csv, trace.csv and run.json: a short hash of what
    /// names the run in the CSVs (point, label, params, seed), so it can be recomputed from them.
    pub fn run_id(&self) -> String {
        let digest = <sha2::Sha256 as sha2::Digest>::digest(self.file_stem().as_bytes());
        digest[..6].iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn safe_stem(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A finished run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub key: RunKey,
    pub rounds: u64,
    pub converged: bool,
    pub stop_reason: String,
    pub trace: Vec<TraceRow>,
    pub bytes_up_per_client: Vec<u64>,
    /// The method's parameters as it ran them, defaults included.
    #[serde(default)]
    pub resolved: serde_json::Value,
    /// Vectors describing the final estimate (the family's spectra, e.g. σ(L) and σ(L₀)).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "nonfinite::vecs"
    )]
    pub spectra: BTreeMap<String, Vec<f64>>,
    pub threads: usize,
    /// Peak resident memory (MiB) of the process that computed this run, read as it finished.
    /// Absent in runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<f64>,
    /// Values the method chose while running (e.g. CEDRE's searched step size η), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub chosen: BTreeMap<String, f64>,
    /// Why a "failed" run stopped: the method's error or panic message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunRecord {
    /// A run made up for a test: `label` (also its method) at `point`, its rounds those of the
    /// trace's last row, stopped for `stop_reason`.
    #[cfg(test)]
    pub(crate) fn crafted(
        point: &str,
        label: &str,
        converged: bool,
        stop_reason: &str,
        trace: Vec<TraceRow>,
    ) -> Self {
        RunRecord {
            key: RunKey {
                point: point.into(),
                method: label.into(),
                label: label.into(),
                params: String::new(),
                seed: 1,
                fingerprint: String::new(),
            },
            rounds: trace.last().map_or(0, |t| t.round),
            converged,
            stop_reason: stop_reason.into(),
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

    /// First round at which `value` is at or below `target`.
    pub fn first_round_below(
        &self,
        value: impl Fn(&TraceRow) -> Option<f64>,
        target: f64,
    ) -> Option<u64> {
        self.trace
            .iter()
            .find(|t| value(t).is_some_and(|v| v <= target))
            .map(|t| t.round)
    }

    /// What its end means under `stop` (see [`Status::of`]); a stop reason this build does not
    /// know (only a hand-made record: reloading refuses one) claims nothing: failed.
    pub fn status(&self, stop: &StopSpec, kind: Kind) -> Status {
        self.stop_reason
            .parse::<StopReason>()
            .map_or(Status::Failed, |r| Status::of(&r, stop, kind, &self.trace))
    }

    pub fn last(&self) -> &TraceRow {
        self.trace
            .last()
            .expect("a run has at least its round-0 row")
    }
}

/// Per-run files under `<experiment results>/runs/`.
pub struct RunStore {
    dir: PathBuf,
}

impl RunStore {
    pub fn new(results_dir: &Path) -> Self {
        let dir = results_dir.join("runs");
        // A run killed while being stored: its temporary file goes before any run is resumed.
        crate::util::sweep_stale_temps(&dir);
        Self { dir }
    }
    fn path(&self, stem: &str) -> PathBuf {
        self.dir.join(format!("{stem}.json"))
    }
    /// A finished run, if one is stored for exactly this key (fingerprint included) and its
    /// checksum holds. A file that was edited or damaged is reported and run again.
    pub fn load(&self, key: &RunKey) -> Option<RunRecord> {
        let path = self.path(&key.file_stem());
        let text = std::fs::read_to_string(&path).ok()?;
        let stored: StoredRun = match serde_json::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "warning: {} is unreadable ({e}); running it again",
                    path.display()
                );
                return None;
            }
        };
        if digest(&stored.record).ok()? != stored.sha256 {
            eprintln!(
                "warning: {}: checksum mismatch (edited or damaged); running it again",
                path.display()
            );
            return None;
        }
        (stored.record.key == *key).then_some(stored.record)
    }
    pub fn save(&self, rec: &RunRecord) -> Result<()> {
        let stored = StoredRun {
            sha256: digest(rec)?,
            record: rec.clone(),
        };
        let json = serde_json::to_vec(&stored).context("serialising run record")?;
        atomic_write(&self.path(&rec.key.file_stem()), &json)
    }
}

/// A stored run with the SHA-256 of its record's JSON, which `load` recomputes from the parsed
/// record (floats round-trip exactly), so any change to a value is caught.
#[derive(Serialize, Deserialize)]
struct StoredRun {
    sha256: String,
    record: RunRecord,
}

fn digest(rec: &RunRecord) -> Result<String> {
    let json = serde_json::to_vec(rec).context("serialising run record")?;
    let d = <sha2::Sha256 as sha2::Digest>::digest(&json);
    Ok(d.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_run_with_nan_and_infinite_metrics_reads_back_bit_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(dir.path());
        let metrics = BTreeMap::from([
            ("a".to_string(), f64::NAN),
            ("b".to_string(), f64::NEG_INFINITY),
            ("c".to_string(), f64::INFINITY),
            ("d".to_string(), 0.1 + 0.2),
        ]);
        let rec = RunRecord {
            key: RunKey {
                point: "n=1".into(),
                method: "ssi".into(),
                label: "SSI".into(),
                params: String::new(),
                seed: 3,
                fingerprint: "f".into(),
            },
            rounds: 1,
            converged: false,
            stop_reason: "max_rounds".into(),
            trace: vec![TraceRow::at_start(metrics)],
            bytes_up_per_client: vec![0],
            resolved: serde_json::Value::Null,
            spectra: BTreeMap::from([("s".to_string(), vec![1.0, f64::NAN])]),
            threads: 1,
            peak_rss_mib: None,
            chosen: BTreeMap::from([("eta".to_string(), 0.01)]),
            error: Some("failed: singular".into()),
        };
        store.save(&rec).unwrap();
        let back = store.load(&rec.key).expect("stored run loads");
        let bits = |r: &RunRecord| -> Vec<u64> {
            let m = &r.trace[0].metrics;
            m.values()
                .chain(&r.spectra["s"])
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(bits(&back), bits(&rec));
    }
}
