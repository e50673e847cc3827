//! trace.csv and summary.csv: tidy tables built with polars, written atomically.
//!
//! Column names are a contract with users' scripts: the fixed columns, then the problem
//! family's metrics by name, then `point`, (`leak_err`, with `[attack] unscaled` `kkt_abs` and
//! `leak_abs`,) `run_id`.

use crate::problem::MetricDef;
use crate::run::{RunKey, RunRecord, TraceRow};
use crate::spec::{Experiment, PaperResult, KKT_ABS, LEAK_ABS, LEAK_ERR};
use crate::util::atomic_write;
use anyhow::Result;
use polars::prelude::*;
use std::path::Path;

/// The paper's numbers for one run: those given for its sweep point, or, without a sweep, those
/// given for the method. A sweep's un-pointed numbers are averages and belong to `paper_average`.
/// They attach to the entry the manifest names (`Experiment::names_run`), never to a variant.
pub fn paper_for<'a>(exp: &'a Experiment, key: &RunKey) -> Option<&'a PaperResult> {
    let sweep = exp.points.len() > 1;
    exp.paper_results.iter().find(|p| {
        exp.names_run(&p.method, &key.method, &key.label, &key.params)
            && match &p.point {
                Some(pt) => *pt == key.point,
                None => !sweep,
            }
    })
}

/// The paper's numbers for a method variant over the whole experiment (for a sweep: its
/// averages).
pub fn paper_average<'a>(
    exp: &'a Experiment,
    method: &str,
    label: &str,
    variant: &str,
) -> Option<&'a PaperResult> {
    exp.paper_results
        .iter()
        .find(|p| exp.names_run(&p.method, method, label, variant) && p.point.is_none())
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

/// The metrics the report and summary.csv set beside the paper's: those the paper reports for
/// this experiment, in family order; without any, the family's first two lower-is-better ones.
pub fn reported_metrics(exp: &Experiment) -> Vec<&'static MetricDef> {
    let defs = crate::problem::family(exp.kind).metrics();
    if !exp.table_metrics.is_empty() {
        return exp
            .table_metrics
            .iter()
            .filter_map(|n| crate::problem::metric(exp.kind, n))
            .collect();
    }
    let named: Vec<&MetricDef> = defs
        .iter()
        .filter(|m| exp.paper_results.iter().any(|p| p.metric(m.name).is_some()))
        .collect();
    if named.is_empty() {
        defs.iter().filter(|m| m.lower_is_better).take(2).collect()
    } else {
        named
    }
}

/// One row per (run, round): the network's counts, then the family's metrics by name.
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
    let mut cols = vec![
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
        f64_col("vectors", floats(&|t| t.vectors)),
    ];
    for m in crate::problem::family(exp.kind).metrics() {
        cols.push(f64_col(
            m.name,
            floats(&|t| t.metric(m.name).unwrap_or(f64::NAN)),
        ));
    }
    cols.push(str_col("point", each(&|r, _| r.key.point.clone())));
    if exp.attack.is_some() || rows.iter().any(|(_, t)| t.leak_err.is_some()) {
        cols.push(opt_f64_col(
            LEAK_ERR,
            rows.iter().map(|(_, t)| t.leak_err).collect(),
        ));
    }
    if exp.attack.as_ref().is_some_and(|a| a.unscaled) {
        for name in [KKT_ABS, LEAK_ABS] {
            cols.push(opt_f64_col(
                name,
                rows.iter().map(|(_, t)| t.metric(name)).collect(),
            ));
        }
    }
    cols.push(str_col("run_id", each(&|r, _| r.key.run_id())));
    Ok(DataFrame::new_infer_height(cols)?)
}

/// One row per run: the final metrics, then the paper's numbers beside them.
pub fn summary_frame(exp: &Experiment, records: &[RunRecord]) -> Result<DataFrame> {
    let paper: Vec<Option<&PaperResult>> = records.iter().map(|r| paper_for(exp, &r.key)).collect();
    let last = |f: &dyn Fn(&RunRecord) -> f64| records.iter().map(f).collect::<Vec<f64>>();
    let strs = |f: &dyn Fn(&RunRecord) -> String| records.iter().map(f).collect::<Vec<String>>();
    let ints = |f: &dyn Fn(&RunRecord) -> u64| records.iter().map(f).collect::<Vec<u64>>();
    let mut cols = vec![
        str_col("experiment", vec![exp.id.clone(); records.len()]),
        str_col("profile", vec![exp.profile.clone(); records.len()]),
        str_col("method", strs(&|r| r.key.label.clone())),
        str_col("params", strs(&|r| r.key.params.clone())),
        Column::new("seed".into(), ints(&|r| r.key.seed)),
        Column::new("rounds".into(), ints(&|r| r.rounds)),
        Column::new(
            "converged".into(),
            records.iter().map(|r| r.converged).collect::<Vec<bool>>(),
        ),
        f64_col("time_s", last(&|r| r.last().time_s)),
        Column::new("bytes_up".into(), ints(&|r| r.last().bytes_up)),
        Column::new("bytes_down".into(), ints(&|r| r.last().bytes_down)),
        f64_col("vectors", last(&|r| r.last().vectors)),
    ];
    for m in crate::problem::family(exp.kind).metrics() {
        cols.push(f64_col(
            m.name,
            last(&|r| r.last().metric(m.name).unwrap_or(f64::NAN)),
        ));
    }
    cols.push(Column::new(
        "paper_rounds".into(),
        paper
            .iter()
            .map(|p| p.and_then(|p| p.rounds))
            .collect::<Vec<Option<u64>>>(),
    ));
    for m in reported_metrics(exp) {
        cols.push(opt_f64_col(
            &format!("paper_{}", m.name),
            paper
                .iter()
                .map(|p| p.and_then(|p| p.metric(m.name)))
                .collect(),
        ));
    }
    cols.push(str_col("stop_reason", strs(&|r| r.stop_reason.clone())));
    cols.push(str_col("point", strs(&|r| r.key.point.clone())));
    cols.push(str_col("run_id", strs(&|r| r.key.run_id())));
    Ok(DataFrame::new_infer_height(cols)?)
}

/// One row per (run, spectrum, index): the vectors a family records about final estimates
/// (robust PCA: `sv` = σ(L), `sv_truth` = σ(L₀)). None when no run has any.
pub fn spectra_frame(exp: &Experiment, records: &[RunRecord]) -> Result<Option<DataFrame>> {
    let rows: Vec<(&RunRecord, &str, usize, f64)> = records
        .iter()
        .flat_map(|r| {
            r.spectra.iter().flat_map(move |(name, v)| {
                v.iter()
                    .enumerate()
                    .map(move |(i, &x)| (r, name.as_str(), i + 1, x))
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let strs =
        |f: &dyn Fn(&RunRecord) -> String| rows.iter().map(|(r, ..)| f(r)).collect::<Vec<String>>();
    Ok(Some(DataFrame::new_infer_height(vec![
        str_col("experiment", vec![exp.id.clone(); rows.len()]),
        str_col("profile", vec![exp.profile.clone(); rows.len()]),
        str_col("method", strs(&|r| r.key.label.clone())),
        str_col("params", strs(&|r| r.key.params.clone())),
        Column::new(
            "seed".into(),
            rows.iter().map(|(r, ..)| r.key.seed).collect::<Vec<u64>>(),
        ),
        str_col("point", strs(&|r| r.key.point.clone())),
        str_col(
            "spectrum",
            rows.iter().map(|(_, n, ..)| n.to_string()).collect(),
        ),
        Column::new(
            "index".into(),
            rows.iter()
                .map(|(_, _, i, _)| *i as u64)
                .collect::<Vec<u64>>(),
        ),
        f64_col("value", rows.iter().map(|(.., x)| *x).collect()),
        str_col("run_id", strs(&|r| r.key.run_id())),
    ])?))
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
