//! trace.csv and summary.csv: tidy tables built with polars, written atomically.
//!
//! Column names are a contract with users' scripts; extra columns only ever go at the end.

use crate::manifest::{Experiment, PaperResult};
use crate::run::{RunKey, RunRecord, TraceRow};
use crate::util::atomic_write;
use anyhow::Result;
use polars::prelude::*;
use std::path::Path;

/// The paper's numbers for one run: those given for its sweep point, or, without a sweep, those
/// given for the method. A sweep's un-pointed numbers are averages and belong to `paper_average`.
pub fn paper_for<'a>(exp: &'a Experiment, key: &RunKey) -> Option<&'a PaperResult> {
    let sweep = exp.points.len() > 1;
    exp.paper_results.iter().find(|p| {
        (p.method == key.method || p.method == key.label)
            && match &p.point {
                Some(pt) => *pt == key.point,
                None => !sweep,
            }
    })
}

/// The paper's numbers for a method over the whole experiment (for a sweep: its averages).
pub fn paper_average<'a>(exp: &'a Experiment, name: &str, label: &str) -> Option<&'a PaperResult> {
    exp.paper_results
        .iter()
        .find(|p| (p.method == name || p.method == label) && p.point.is_none())
}

fn str_col(name: &str, v: Vec<String>) -> Column {
    Column::new(name.into(), v)
}

/// Floats as text in Rust's shortest round-trip form. Measured: polars' own float writer
/// printed the same f64 with different trailing digits from one process to the next, which
/// broke "same seed ⇒ identical CSV".
fn f64_col(name: &str, v: Vec<f64>) -> Column {
    Column::new(
        name.into(),
        v.into_iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<String>>(),
    )
}

fn opt_f64_col(name: &str, v: Vec<Option<f64>>) -> Column {
    Column::new(
        name.into(),
        v.into_iter()
            .map(|x| x.map(|x| format!("{x:?}")))
            .collect::<Vec<Option<String>>>(),
    )
}

/// One row per (run, round).
pub fn trace_frame(exp: &Experiment, records: &[RunRecord]) -> Result<DataFrame> {
    let rows: Vec<(&RunRecord, &TraceRow)> = records
        .iter()
        .flat_map(|r| r.trace.iter().map(move |t| (r, t)))
        .collect();
    let each = |f: &dyn Fn(&RunRecord, &TraceRow) -> String| {
        rows.iter().map(|(r, t)| f(r, t)).collect::<Vec<String>>()
    };
    let ints = |f: &dyn Fn(&TraceRow) -> u64| rows.iter().map(|(_, t)| f(t)).collect::<Vec<u64>>();
    let floats =
        |f: &dyn Fn(&TraceRow) -> f64| rows.iter().map(|(_, t)| f(t)).collect::<Vec<f64>>();
    Ok(DataFrame::new_infer_height(vec![
        str_col("experiment", vec![exp.id.clone(); rows.len()]),
        str_col("profile", vec![exp.profile.clone(); rows.len()]),
        str_col("method", each(&|r, _| r.key.label.clone())),
        str_col("params", each(&|r, _| r.key.params.clone())),
        Column::new(
            "seed".into(),
            rows.iter().map(|(r, _)| r.key.seed).collect::<Vec<u64>>(),
        ),
        Column::new("round".into(), ints(&|t| t.round)),
        f64_col("inner_iters", floats(&|t| t.inner_iters)),
        f64_col("time_s", floats(&|t| t.time_s)),
        Column::new("bytes_up".into(), ints(&|t| t.bytes_up)),
        Column::new("bytes_down".into(), ints(&|t| t.bytes_down)),
        Column::new("vectors".into(), ints(&|t| t.vectors)),
        f64_col("objective", floats(&|t| t.objective)),
        f64_col("kkt", floats(&|t| t.kkt)),
        f64_col("sv_err", floats(&|t| t.sv_err)),
        f64_col("subspace_dist", floats(&|t| t.subspace_dist)),
        str_col("point", each(&|r, _| r.key.point.clone())),
        opt_f64_col("leak_err", rows.iter().map(|(_, t)| t.leak_err).collect()),
    ])?)
}

/// One row per run, with the paper's numbers beside ours.
pub fn summary_frame(exp: &Experiment, records: &[RunRecord]) -> Result<DataFrame> {
    let paper: Vec<Option<&PaperResult>> = records.iter().map(|r| paper_for(exp, &r.key)).collect();
    let last = |f: fn(&RunRecord) -> f64| records.iter().map(f).collect::<Vec<f64>>();
    Ok(DataFrame::new_infer_height(vec![
        str_col("experiment", vec![exp.id.clone(); records.len()]),
        str_col("profile", vec![exp.profile.clone(); records.len()]),
        str_col(
            "method",
            records.iter().map(|r| r.key.label.clone()).collect(),
        ),
        str_col(
            "params",
            records.iter().map(|r| r.key.params.clone()).collect(),
        ),
        Column::new(
            "seed".into(),
            records.iter().map(|r| r.key.seed).collect::<Vec<u64>>(),
        ),
        Column::new(
            "rounds".into(),
            records.iter().map(|r| r.rounds).collect::<Vec<u64>>(),
        ),
        Column::new(
            "converged".into(),
            records.iter().map(|r| r.converged).collect::<Vec<bool>>(),
        ),
        f64_col("time_s", last(|r| r.last().time_s)),
        Column::new(
            "bytes_up".into(),
            records
                .iter()
                .map(|r| r.last().bytes_up)
                .collect::<Vec<u64>>(),
        ),
        Column::new(
            "bytes_down".into(),
            records
                .iter()
                .map(|r| r.last().bytes_down)
                .collect::<Vec<u64>>(),
        ),
        f64_col("kkt", last(|r| r.last().kkt)),
        f64_col("sv_err", last(|r| r.last().sv_err)),
        Column::new(
            "paper_rounds".into(),
            paper
                .iter()
                .map(|p| p.and_then(|p| p.rounds))
                .collect::<Vec<Option<u64>>>(),
        ),
        opt_f64_col(
            "paper_sv_err",
            paper.iter().map(|p| p.and_then(|p| p.sv_err)).collect(),
        ),
        f64_col("subspace_dist", last(|r| r.last().subspace_dist)),
        Column::new(
            "vectors".into(),
            records
                .iter()
                .map(|r| r.last().vectors)
                .collect::<Vec<u64>>(),
        ),
        str_col(
            "stop_reason",
            records.iter().map(|r| r.stop_reason.clone()).collect(),
        ),
        str_col(
            "point",
            records.iter().map(|r| r.key.point.clone()).collect(),
        ),
    ])?)
}

/// Write `df` as CSV to `path`, atomically.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<()> {
    let mut buf = Vec::new();
    CsvWriter::new(&mut buf)
        .include_header(true)
        .finish(df)
        .map_err(|e| anyhow::anyhow!("formatting {}: {e}", path.display()))?;
    atomic_write(path, &buf)
}
