//! Results: tidy CSV tables, figures and the paper-beside-ours report.

pub mod claims;
pub mod figures;
pub mod markdown;
pub mod plot;
pub mod provenance;
pub mod reload;
pub mod tables;

use crate::manifest::Experiment;
use crate::run::Outcome;
use crate::util::atomic_write;
use anyhow::Result;

/// Write trace.csv, summary.csv, the figures, report.md and run.json into the experiment's folder.
pub fn write_all(exp: &Experiment, out: &Outcome) -> Result<()> {
    let dir = &out.dir;
    tables::write_csv(
        &mut tables::trace_frame(exp, &out.records)?,
        &dir.join("trace.csv"),
    )?;
    tables::write_csv(
        &mut tables::summary_frame(exp, &out.records)?,
        &dir.join("summary.csv"),
    )?;
    if let Some(mut df) = tables::spectra_frame(exp, &out.records)? {
        tables::write_csv(&mut df, &dir.join("spectra.csv"))?;
    }
    let figures = figures::render_all(exp, &out.records, dir)?;
    atomic_write(
        &dir.join("report.md"),
        markdown::report(exp, out, &figures).as_bytes(),
    )?;
    let json = serde_json::to_vec_pretty(&provenance::run_json(exp, out))?;
    atomic_write(&dir.join("run.json"), &json)
}
