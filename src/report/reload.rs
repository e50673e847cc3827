//! Re-rendering a results folder from what is committed: trace.csv, summary.csv and run.json
//! hold everything a report, its figures and its tables need, so a fresh clone can re-render
//! (after a change of format, of figures or of the manifest's paper numbers) without re-running.
//! Stored runs (`runs/`) are not committed.

use crate::fed::vectors;
use crate::plan;
use crate::run::{Outcome, RunKey, RunRecord, Status, StopReason, TraceRow};
use crate::spec::{Experiment, KKT_ABS, LEAK_ABS, LEAK_ERR};
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

type Row = HashMap<String, String>;

fn read_rows(path: &Path) -> Result<Vec<Row>> {
    let mut rdr =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let headers = rdr.headers()?.clone();
    rdr.records()
        .enumerate()
        .map(|(i, rec)| {
            let rec = rec.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
            Ok(headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect())
        })
        .collect()
}

fn field<T: std::str::FromStr>(row: &Row, key: &str, path: &Path, line: usize) -> Result<T> {
    let Some(text) = row.get(key) else {
        bail!("{}: no column `{key}`", path.display())
    };
    text.parse().map_err(|_| {
        anyhow::anyhow!(
            "{}:{line}: column `{key}`: cannot read {text:?}",
            path.display()
        )
    })
}

/// A run's key columns (method label, params, point, seed as written).
type RunCells<'a> = [&'a str; 4];

/// `rows` grouped by run, each with its line: summary rows find their trace and spectra rows
/// by key (a map, not every summary row against every trace row). Rows missing a key column
/// belong to no run.
fn by_run(rows: &[Row]) -> HashMap<RunCells<'_>, Vec<(usize, &Row)>> {
    let mut map: HashMap<RunCells, Vec<(usize, &Row)>> = HashMap::new();
    for (j, r) in rows.iter().enumerate() {
        let cell = |k: &str| r.get(k).map(String::as_str);
        if let (Some(m), Some(pa), Some(pt), Some(s)) =
            (cell("method"), cell("params"), cell("point"), cell("seed"))
        {
            map.entry([m, pa, pt, s]).or_default().push((j + 2, r));
        }
    }
    map
}

/// The results were computed on the data the manifest names now: each point's `[data]` as
/// run.json recorded it (for a data file, its digest) equals the manifest's. Otherwise a render
/// would stamp the new data's provenance on the old numbers.
fn same_data(exp: &Experiment, run_json: &serde_json::Value, json_path: &Path) -> Result<()> {
    let Some(recorded) = run_json["points"].as_array() else {
        return Ok(());
    };
    for (point, rec) in exp.points.iter().zip(recorded) {
        let now = serde_json::to_value(&point.data)?;
        if rec.get("data").is_some_and(|then| *then != now) {
            let label = if point.label.is_empty() {
                "the point"
            } else {
                &point.label
            };
            anyhow::bail!(
                "{}: {label}'s [data] differs from what these results were computed on (a data \
                 file that changed has a new sha256): run the manifest again instead of \
                 rendering",
                json_path.display()
            );
        }
    }
    Ok(())
}

/// The runs of `exp` as its results folder `dir` holds them.
pub fn outcome_from_csv(exp: &Experiment, dir: &Path) -> Result<Outcome> {
    let (trace_path, summary_path) = (dir.join("trace.csv"), dir.join("summary.csv"));
    let json_path = dir.join("run.json");
    let run_json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json_path)
            .with_context(|| format!("cannot read {}", json_path.display()))?,
    )
    .with_context(|| format!("{} is not valid JSON", json_path.display()))?;
    same_data(exp, &run_json, &json_path)?;
    let trace = read_rows(&trace_path)?;
    let spectra_path = dir.join("spectra.csv");
    let spectra = if spectra_path.exists() {
        read_rows(&spectra_path)?
    } else {
        Vec::new()
    };
    let (trace_of, spectra_of) = (by_run(&trace), by_run(&spectra));
    // Each run once: its first summary line, by key.
    let mut seen: HashMap<(String, String, String, u64), usize> = HashMap::new();
    let mut records = Vec::new();
    for (i, s) in read_rows(&summary_path)?.iter().enumerate() {
        let line = i + 2;
        let (label, params, point): (String, String, String) = (
            field(s, "method", &summary_path, line)?,
            field(s, "params", &summary_path, line)?,
            field(s, "point", &summary_path, line)?,
        );
        let seed: u64 = field(s, "seed", &summary_path, line)?;
        if let Some(first) = seen.insert((label.clone(), params.clone(), point.clone(), seed), line)
        {
            bail!(
                "{}: lines {first} and {line} name the same run ({label} {params} seed {seed} {point})",
                summary_path.display()
            );
        }
        let seed_text = seed.to_string();
        let run: RunCells = [&label, &params, &point, &seed_text];
        let Some(m) = exp.methods.iter().find(|m| m.label == label) else {
            bail!(
                "{}:{line}: method {label:?} is not in manifest {}",
                summary_path.display(),
                exp.path.display()
            )
        };
        let Some(pt) = exp.points.iter().find(|p| p.label == point) else {
            bail!(
                "{}:{line}: point {point:?} is not in the manifest's `{}` profile",
                summary_path.display(),
                exp.profile
            )
        };
        let key = RunKey {
            point: point.clone(),
            method: m.name.clone(),
            label: label.clone(),
            params: params.clone(),
            seed,
            fingerprint: String::new(),
        };
        let mut rows = Vec::new();
        for &(line, t) in trace_of.get(&run).into_iter().flatten() {
            let (up, down): (u64, u64) = (
                field(t, "bytes_up", &trace_path, line)?,
                field(t, "bytes_down", &trace_path, line)?,
            );
            // Figures and n-vectors add them: a sum past u64 would wrap silently.
            let Some(total) = up.checked_add(down) else {
                bail!(
                    "{}:{line}: columns `bytes_up` + `bytes_down` ({up} + {down}) overflow 64 bits",
                    trace_path.display()
                )
            };
            let mut metrics = BTreeMap::new();
            for d in crate::problem::family(exp.kind).metrics() {
                metrics.insert(d.name.to_string(), field(t, d.name, &trace_path, line)?);
            }
            let optional = |name: &str| -> Result<Option<f64>> {
                match t.get(name).map(String::as_str) {
                    None | Some("") => Ok(None),
                    Some(_) => Ok(Some(field(t, name, &trace_path, line)?)),
                }
            };
            let leak_err = optional(LEAK_ERR)?;
            for name in [KKT_ABS, LEAK_ABS] {
                if let Some(v) = optional(name)? {
                    metrics.insert(name.to_string(), v);
                }
            }
            rows.push(TraceRow {
                round: field(t, "round", &trace_path, line)?,
                inner_iters: field(t, "inner_iters", &trace_path, line)?,
                time_s: field(t, "time_s", &trace_path, line)?,
                bytes_up: up,
                bytes_down: down,
                // As the network counts them (earlier formats rounded them down).
                vectors: vectors(total, pt.data.n),
                metrics,
                leak_err,
            });
        }
        if rows.is_empty() {
            bail!(
                "{}: no rows for run {label} {params} seed {seed} {point} of {}",
                trace_path.display(),
                summary_path.display()
            );
        }
        // A trace cut short (or run on) would be drawn and tabled as the whole run.
        let rounds: u64 = field(s, "rounds", &summary_path, line)?;
        let last = rows.iter().map(|r| r.round).max().unwrap_or(0);
        if last != rounds {
            bail!(
                "{}: run {label} {params} seed {seed} {point} ends at round {last}, but {}:{line} \
                 says rounds = {rounds}",
                trace_path.display(),
                summary_path.display()
            );
        }
        let stored = run_json["runs"].as_array().and_then(|runs| {
            runs.iter().find(|r| {
                r["label"] == label.as_str()
                    && r["params"] == params.as_str()
                    && r["point"] == point.as_str()
                    && r["seed"].as_u64() == Some(seed)
            })
        });
        let of = |k: &str| stored.map(|r| r[k].clone()).unwrap_or_default();
        let mut spectrum: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for &(line, t) in spectra_of.get(&run).into_iter().flatten() {
            let name: String = field(t, "spectrum", &spectra_path, line)?;
            let value: f64 = field(t, "value", &spectra_path, line)?;
            spectrum.entry(name).or_default().push(value);
        }
        records.push(RunRecord {
            key,
            rounds,
            // Judged again from the stop reason (see `Status::of`), not read: folders written
            // before the status column called every stop by rule (27) converged.
            converged: false,
            stop_reason: field::<StopReason>(s, "stop_reason", &summary_path, line)?.as_str(),
            trace: rows,
            bytes_up_per_client: serde_json::from_value(of("bytes_up_per_client"))
                .unwrap_or_default(),
            resolved: match of("params_resolved") {
                serde_json::Value::Null => m.resolved.clone(),
                v => v,
            },
            spectra: spectrum,
            threads: of("threads").as_u64().unwrap_or(0) as usize,
            peak_rss_mib: of("peak_rss_mib")
                .as_f64()
                .or_else(|| run_json["peak_rss_mib"].as_f64()),
            chosen: serde_json::from_value(of("chosen")).unwrap_or_default(),
            error: of("error").as_str().map(str::to_string),
        });
    }
    for r in &mut records {
        r.converged = r.status(&exp.stop, exp.kind) == Status::Converged;
    }
    let at = |k: &str| run_json[k].as_u64().unwrap_or(0);
    Ok(Outcome {
        dir: dir.to_path_buf(),
        peak_rss_mib: records
            .iter()
            .filter_map(|r| r.peak_rss_mib)
            .reduce(f64::max),
        records,
        planned: exp
            .methods
            .iter()
            .filter(|m| crate::methods::registry::lookup(&m.name).is_none())
            .cloned()
            .collect(),
        started_unix: at("started_unix"),
        finished_unix: at("finished_unix"),
        threads: at("threads") as usize,
        computed_by: Some(run_json),
    })
}

/// One results folder, as `dpca render` reads it.
pub struct Folder {
    /// Relative to the results root: <paper>/<id>/<profile>.
    pub rel: PathBuf,
    pub exp: Experiment,
    pub out: crate::run::Outcome,
    /// File names run.json lists.
    pub files: Vec<String>,
}

pub fn load_folder(root: &Path, rel: &Path) -> Result<Folder> {
    let dir = root.join(rel);
    let json_path = dir.join("run.json");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json_path)
            .with_context(|| format!("cannot read {}", json_path.display()))?,
    )
    .with_context(|| format!("{} is not valid JSON", json_path.display()))?;
    let exp =
        plan::load_recorded(&json).with_context(|| format!("the manifest of {}", dir.display()))?;
    let out = outcome_from_csv(&exp, &dir)?;
    let files = json["files"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    Ok(Folder {
        rel: rel.to_path_buf(),
        exp,
        out,
        files,
    })
}

/// Results folders (holding a run.json) under `root`, relative to it: sorted by paper, id and
/// profile.
pub fn folders(root: &Path) -> Result<Vec<PathBuf>> {
    Ok(super::compare::folders_under(root)?
        .into_iter()
        .filter(|rel| root.join(rel).join("run.json").is_file())
        .collect())
}
