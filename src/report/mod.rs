//! Results: tidy CSV tables, figures and the paper-beside-ours report.

mod cells;
pub mod claims;
pub mod compare;
pub mod figures;
pub mod html;
pub mod looks;
pub mod markdown;
mod page;
pub mod placeholders;
pub mod provenance;
mod quantity;
pub mod reload;
pub mod scorecard;
mod scorecard_html;
pub mod stop_study;
pub mod sweep_names;
pub mod tables;

use crate::run::Outcome;
use crate::spec::Experiment;
use crate::util::atomic_write;
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Write trace.csv, summary.csv, the figures, report.md and run.json into the experiment's folder.
///
/// run.json comes last and lists every other file with its SHA-256: a set interrupted while
/// being written (or edited since) disagrees with it, which [`check_complete`] reports.
pub fn write_all(exp: &Experiment, out: &Outcome) -> Result<()> {
    let dir = &out.dir;
    let mut names = vec!["trace.csv".to_string(), "summary.csv".to_string()];
    tables::write_csv(
        &tables::trace_table(exp, &out.records)?,
        &dir.join("trace.csv"),
    )?;
    tables::write_csv(
        &tables::summary_table(exp, &out.records)?,
        &dir.join("summary.csv"),
    )?;
    if let Some(table) = tables::spectra_table(exp, &out.records)? {
        tables::write_csv(&table, &dir.join("spectra.csv"))?;
        names.push("spectra.csv".into());
    }
    let figures = figures::render_all(exp, &out.records, dir)?;
    for stem in &figures {
        let stem = stem.file_name().map(|s| s.to_string_lossy().to_string());
        for ext in ["svg", "png"] {
            let name = format!("{}.{ext}", stem.as_deref().unwrap_or_default());
            if dir.join(&name).is_file() {
                names.push(name);
            }
        }
    }
    atomic_write(
        &dir.join("report.md"),
        markdown::report(exp, out, &figures).as_bytes(),
    )?;
    names.push("report.md".into());
    let mut files = serde_json::Map::new();
    for name in names {
        let digest = file_sha256(&dir.join(&name))?;
        files.insert(name, digest.into());
    }
    let mut json = provenance::run_json(exp, out);
    json["files"] = files.into();
    atomic_write(&dir.join("run.json"), &serde_json::to_vec_pretty(&json)?)
}

fn file_sha256(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Check that a results folder holds the complete set its run.json lists, unchanged: the number
/// of files checked, or an error naming the first file that is missing or differs.
pub fn check_complete(dir: &Path) -> Result<usize> {
    let json = dir.join("run.json");
    let text = std::fs::read_to_string(&json).with_context(|| {
        format!(
            "{}: no readable run.json: not a complete results folder",
            dir.display()
        )
    })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", json.display()))?;
    let files = v["files"].as_object().with_context(|| {
        format!("{}: no `files` list (written before run.json listed its files: re-render with `dpca render {}`)", json.display(), dir.display())
    })?;
    // Every set `write_all` writes holds both tables: a list without them (or empty) vouches
    // for nothing.
    if let Some(absent) = ["trace.csv", "summary.csv"]
        .into_iter()
        .find(|n| !files.contains_key(*n))
    {
        bail!(
            "{}: its `files` list does not name {absent}: not the list of a complete results folder",
            json.display()
        );
    }
    for (name, want) in files {
        let path = dir.join(name);
        if name.contains(['/', '\\']) || name.starts_with('.') {
            bail!("{}: file name {name:?} is not a plain name", json.display());
        }
        let got = file_sha256(&path).with_context(|| {
            format!(
                "{}: incomplete: {name} is listed in run.json but missing",
                dir.display()
            )
        })?;
        if want.as_str() != Some(got.as_str()) {
            bail!(
                "{}: incomplete or edited: {name} differs from the SHA-256 run.json records \
                 (a write was interrupted, or the file changed since)",
                dir.display()
            );
        }
    }
    Ok(files.len())
}
