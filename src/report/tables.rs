//! trace.csv, summary.csv and spectra.csv: tidy tables written with the csv crate, atomically.
//!
//! Column names are a contract with users' scripts: the fixed columns, then the problem
//! family's metrics by name, then `point`, (`leak_err`, with `[attack] unscaled` `kkt_abs` and
//! `leak_abs`,) `run_id`. summary.csv also has a `p_<name>` column per resolved method parameter
//! after `params` ([`param_columns`]).

use crate::problem::MetricDef;
use crate::run::{RunKey, RunRecord, TraceRow};
use crate::spec::{Experiment, PaperResult, KKT_ABS, LEAK_ABS, LEAK_ERR};
use crate::util::atomic_write_with;
use anyhow::{ensure, Result};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;
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

/// One column of a [`Table`]: its name and its cells as text, `None` where a value is missing.
pub struct Column {
    name: String,
    cells: Vec<Option<String>>,
}

impl Column {
    fn new<T: ToString>(name: &str, v: impl IntoIterator<Item = T>) -> Column {
        Column::opt(name, v.into_iter().map(Some))
    }

    fn opt<T: ToString>(name: &str, v: impl IntoIterator<Item = Option<T>>) -> Column {
        Column {
            name: name.to_string(),
            cells: v.into_iter().map(|x| x.map(|x| x.to_string())).collect(),
        }
    }
}

fn str_col(name: &str, v: Vec<String>) -> Column {
    Column::new(name, v)
}

/// Floats as text in Rust's shortest round-trip form (`Debug`: `1.0`, `NaN`), so that the same
/// seed gives the same CSV byte for byte.
fn f64_col(name: &str, v: Vec<f64>) -> Column {
    Column::new(name, v.into_iter().map(|x| format!("{x:?}")))
}

fn opt_f64_col(name: &str, v: Vec<Option<f64>>) -> Column {
    Column::opt(name, v.into_iter().map(|x| x.map(|x| format!("{x:?}"))))
}

/// One `p_<name>` column per parameter any run's method resolved (defaults included), sorted by
/// name; a cell is empty where the run's method has no such parameter or leaves it unset (null).
/// summary.csv only: trace.csv and spectra.csv, with many rows per run, join them by `run_id`.
fn param_columns(records: &[RunRecord]) -> Vec<Column> {
    let names: BTreeSet<&String> = records
        .iter()
        .filter_map(|r| r.resolved.as_object())
        .flat_map(|p| p.keys())
        .collect();
    names
        .into_iter()
        .map(|name| {
            let cells = records
                .iter()
                .map(|r| param_cell(&r.resolved[name.as_str()]));
            Column::opt(&format!("p_{name}"), cells)
        })
        .collect()
}

/// A parameter's value as text: a decimal as [`f64_col`] writes it, an integer, `true`/`false`
/// or a word as it is, a list or table as compact JSON; None when null.
fn param_cell(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Number(n) if n.is_f64() => n.as_f64().map(|x| format!("{x:?}")),
        Value::String(s) => Some(s.clone()),
        _ => Some(v.to_string()),
    }
}

/// Columns of equal length, written row by row by [`write_csv`].
pub struct Table {
    columns: Vec<Column>,
}

impl Table {
    fn new(columns: Vec<Column>) -> Result<Table> {
        if let Some(first) = columns.first() {
            for c in &columns {
                ensure!(
                    c.cells.len() == first.cells.len(),
                    "column {} has {} rows, column {} {}",
                    c.name,
                    c.cells.len(),
                    first.name,
                    first.cells.len()
                );
            }
        }
        Ok(Table { columns })
    }

    fn height(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }
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

/// One row per (run, round): the network's counts, then the family's metrics by name (the
/// method's parameters are summary.csv's, joined by `run_id`).
pub fn trace_table(exp: &Experiment, records: &[RunRecord]) -> Result<Table> {
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
        Column::new("seed", rows.iter().map(|(r, _)| r.key.seed)),
        Column::new("round", ints(&|t| t.round)),
        f64_col("inner_iters", floats(&|t| t.inner_iters)),
        f64_col("time_s", floats(&|t| t.time_s)),
        Column::new("bytes_up", ints(&|t| t.bytes_up)),
        Column::new("bytes_down", ints(&|t| t.bytes_down)),
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
    Table::new(cols)
}

/// One row per run: the final metrics, then the paper's numbers beside them.
pub fn summary_table(exp: &Experiment, records: &[RunRecord]) -> Result<Table> {
    let paper: Vec<Option<&PaperResult>> = records.iter().map(|r| paper_for(exp, &r.key)).collect();
    let last = |f: &dyn Fn(&RunRecord) -> f64| records.iter().map(f).collect::<Vec<f64>>();
    let strs = |f: &dyn Fn(&RunRecord) -> String| records.iter().map(f).collect::<Vec<String>>();
    let ints = |f: &dyn Fn(&RunRecord) -> u64| records.iter().map(f).collect::<Vec<u64>>();
    let mut cols = vec![
        str_col("experiment", vec![exp.id.clone(); records.len()]),
        str_col("profile", vec![exp.profile.clone(); records.len()]),
        str_col("method", strs(&|r| r.key.label.clone())),
        str_col("params", strs(&|r| r.key.params.clone())),
    ];
    cols.extend(param_columns(records));
    cols.extend([
        Column::new("seed", ints(&|r| r.key.seed)),
        Column::new("rounds", ints(&|r| r.rounds)),
        Column::new("converged", records.iter().map(|r| r.converged)),
        f64_col("time_s", last(&|r| r.last().time_s)),
        Column::new("bytes_up", ints(&|r| r.last().bytes_up)),
        Column::new("bytes_down", ints(&|r| r.last().bytes_down)),
        f64_col("vectors", last(&|r| r.last().vectors)),
    ]);
    for m in crate::problem::family(exp.kind).metrics() {
        cols.push(f64_col(
            m.name,
            last(&|r| r.last().metric(m.name).unwrap_or(f64::NAN)),
        ));
    }
    cols.push(Column::opt(
        "paper_rounds",
        paper.iter().map(|p| p.and_then(|p| p.rounds)),
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
    cols.push(str_col(
        "status",
        strs(&|r| r.status(&exp.stop, exp.kind).as_str().into()),
    ));
    cols.push(str_col("point", strs(&|r| r.key.point.clone())));
    cols.push(str_col("run_id", strs(&|r| r.key.run_id())));
    Table::new(cols)
}

/// One row per (run, spectrum, index): the vectors a family records about final estimates
/// (robust PCA: `sv` = σ(L), `sv_truth` = σ(L₀)). None when no run has any.
pub fn spectra_table(exp: &Experiment, records: &[RunRecord]) -> Result<Option<Table>> {
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
    Ok(Some(Table::new(vec![
        str_col("experiment", vec![exp.id.clone(); rows.len()]),
        str_col("profile", vec![exp.profile.clone(); rows.len()]),
        str_col("method", strs(&|r| r.key.label.clone())),
        str_col("params", strs(&|r| r.key.params.clone())),
        Column::new("seed", rows.iter().map(|(r, ..)| r.key.seed)),
        str_col("point", strs(&|r| r.key.point.clone())),
        str_col(
            "spectrum",
            rows.iter().map(|(_, n, ..)| n.to_string()).collect(),
        ),
        Column::new("index", rows.iter().map(|(_, _, i, _)| *i)),
        f64_col("value", rows.iter().map(|(.., x)| *x).collect()),
        str_col("run_id", strs(&|r| r.key.run_id())),
    ])?))
}

/// Write `table` as CSV to `path`, atomically: a header line, then a line per row, `\n` ended.
///
/// Quoted as the committed results are (they were written by polars): a text that is empty
/// (`""`, unlike a missing value, which is an empty field) or holds a comma, a double quote or a
/// line break, with its double quotes doubled. The csv crate's own rule never quotes an empty
/// field, so it writes the fields as [`quoted`] returns them.
pub fn write_csv(table: &Table, path: &Path) -> Result<()> {
    atomic_write_with(path, |w| {
        let mut out = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Never)
            .from_writer(w);
        out.write_record(table.columns.iter().map(|c| quoted(Some(&c.name))))?;
        for i in 0..table.height() {
            out.write_record(table.columns.iter().map(|c| quoted(c.cells[i].as_deref())))?;
        }
        out.flush()
    })
}

/// A field as [`write_csv`] writes it.
fn quoted(cell: Option<&str>) -> Cow<'_, [u8]> {
    match cell {
        None => Cow::Borrowed(b""),
        Some(s) if s.is_empty() || s.contains([',', '"', '\n', '\r']) => {
            Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")).into_bytes())
        }
        Some(s) => Cow::Borrowed(s.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::{param_cell, write_csv, Column, Table};
    use serde_json::json;

    /// A parameter's cell: decimals in shortest round-trip form, integers, booleans and words
    /// as they are, lists and tables as compact JSON, nothing when unset.
    #[test]
    fn parameters_as_text() {
        let values = [
            json!(0.15),
            json!(1.0),
            json!(1e-10),
            json!(8),
            json!(true),
            json!("fixed"),
            json!([0.005, 0.5]),
            json!({"backtrack": 0.5, "max": 20}),
            json!(null),
        ];
        let want = [
            Some("0.15"),
            Some("1.0"),
            Some("1e-10"),
            Some("8"),
            Some("true"),
            Some("fixed"),
            Some("[0.005,0.5]"),
            Some(r#"{"backtrack":0.5,"max":20}"#),
            None,
        ];
        let cells: Vec<Option<String>> = values.iter().map(param_cell).collect();
        assert_eq!(cells, want.map(|c| c.map(str::to_string)));
    }

    /// Quoted as polars quoted the committed results: an empty text `""`, a missing value
    /// empty, a comma, quote or line break inside quotes with quotes doubled; numbers bare.
    #[test]
    fn quotes_as_the_committed_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let table = Table::new(vec![
            Column::new("method", ["SSI", "FAPS, β₀ varied", "a \"b\"", "x\ny", ""]),
            Column::new("seed", [1u64, 2, 3, 4, 5]),
            Column::opt("paper_rounds", [Some(207u64), None, None, Some(0), None]),
            Column::new("converged", [true, false, true, true, false]),
        ])
        .unwrap();
        write_csv(&table, &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "method,seed,paper_rounds,converged\n\
             SSI,1,207,true\n\
             \"FAPS, β₀ varied\",2,,false\n\
             \"a \"\"b\"\"\",3,,true\n\
             \"x\ny\",4,0,true\n\
             \"\",5,,false\n"
        );
        // Atomic: nothing but the file itself is left in the folder.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn header_only_without_rows_and_unequal_columns_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let empty: [u64; 0] = [];
        write_csv(
            &Table::new(vec![Column::new("a", empty), Column::new("b", empty)]).unwrap(),
            &path,
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n");
        assert!(Table::new(vec![Column::new("a", [1u64]), Column::new("b", empty)]).is_err());
    }
}
