//! What a finished run leaves behind: its trace and summary, stored per run so an interrupted
//! experiment resumes where it stopped. serde_json's `float_roundtrip` feature is what makes a
//! loaded run print the same CSV as a fresh one (its default parser can be 1 ulp off).

use crate::manifest::LEAK_ERR;
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
    /// The problem family's metrics by name.
    pub metrics: BTreeMap<String, f64>,
    /// Relative error of the leakage attack after this round (when the manifest asks for it).
    #[serde(default)]
    pub leak_err: Option<f64>,
}

impl TraceRow {
    /// A metric of the family, or the attack's `leak_err`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        if name == LEAK_ERR {
            return self.leak_err;
        }
        self.metrics.get(name).copied()
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
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spectra: BTreeMap<String, Vec<f64>>,
    pub threads: usize,
    /// Peak resident memory (MiB) of the process that computed this run, read as it finished.
    /// Absent in runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<f64>,
}

impl RunRecord {
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
        Self {
            dir: results_dir.join("runs"),
        }
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
