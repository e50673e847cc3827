//! `dpca compare`: two results folders, or two roots of them, cell by cell.

use anyhow::Result;
use dpca_bench::report::compare::{self, Comparison, Tolerance};
use dpca_bench::util::columns;
use std::path::{Path, PathBuf};

use super::common::UsageError;

/// One line of `verify`'s and `compare`'s closing table.
pub fn outcome_row(name: &str, c: &Comparison) -> Vec<String> {
    vec![
        name.to_string(),
        match (c.identical(), c.matches()) {
            (true, _) => "identical",
            (false, true) => "match",
            (false, false) => "DIFFERS",
        }
        .into(),
        if c.rounds_differ() { "DIFFER" } else { "equal" }.into(),
        c.rows.to_string(),
        c.differences.len().to_string(),
        c.largest.map_or("0".into(), |r| format!("{r:.2e}")),
    ]
}

/// Columns of the closing table of `compare` (MAX REL. DIFF: over every compared number,
/// within the tolerance or not).
pub const OUTCOME_HEADER: [&str; 6] = [
    "RESULTS",
    "STATUS",
    "ROUNDS/STOP",
    "ROWS",
    "DIFFERENCES",
    "MAX REL. DIFF",
];

/// `verify`'s closing table adds the kernels of both sides.
pub const KERNELS_HEADER: &str = "KERNELS (A, B)";

/// Differences printed per folder before "… and N more".
const SHOWN: usize = 20;

/// Print one folder's comparison: nothing more when it matches, else its differences.
pub fn print_comparison(name: &str, c: &Comparison, tol: Tolerance) {
    if c.identical() {
        println!(
            "{name}: identical ({} rows, every cell bit for bit)",
            c.rows
        );
    } else if c.matches() {
        println!(
            "{name}: match ({} rows; metrics to {:e} relative + {:e}; largest difference {:.2e})",
            c.rows,
            tol.rtol,
            tol.atol,
            c.largest.unwrap_or(0.0)
        );
    } else {
        println!(
            "{name}: {} difference(s) (A = first, B = second):\n{}",
            c.differences.len(),
            c.table(SHOWN)
        );
    }
}

/// `dpca compare`: two results folders, or every results folder under two roots.
pub fn compare_dirs(a: &Path, b: &Path, tol: Tolerance) -> Result<()> {
    for d in [a, b] {
        if !d.is_dir() {
            return Err(UsageError(format!("{}: no such folder", d.display())).into());
        }
    }
    let is_folder = |d: &Path| d.join("summary.csv").is_file();
    let names: Vec<PathBuf> = if is_folder(a) && is_folder(b) {
        vec![PathBuf::new()]
    } else {
        let mut all = compare::folders_under(a)?;
        all.extend(compare::folders_under(b)?);
        all.sort();
        all.dedup();
        all
    };
    if names.is_empty() {
        return Err(UsageError(format!(
            "neither {} nor {} holds a results folder (one with a summary.csv)",
            a.display(),
            b.display()
        ))
        .into());
    }
    let mut rows = vec![OUTCOME_HEADER.map(String::from).to_vec()];
    let mut differing = 0;
    for rel in &names {
        let name = if rel.as_os_str().is_empty() {
            format!("{} vs {}", a.display(), b.display())
        } else {
            rel.display().to_string()
        };
        let (da, db) = (a.join(rel), b.join(rel));
        if !(is_folder(&da) && is_folder(&db)) {
            let only = if is_folder(&da) { "A" } else { "B" };
            println!("{name}: only in {only}");
            rows.push(vec![
                name,
                format!("only in {only}"),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ]);
            differing += 1;
            continue;
        }
        let c = compare::compare_folders(&da, &db, tol)?;
        print_comparison(&name, &c, tol);
        differing += usize::from(!c.matches());
        rows.push(outcome_row(&name, &c));
    }
    if names.len() > 1 {
        print!("\n{}", columns(&rows));
    }
    if differing > 0 {
        anyhow::bail!("{differing} of {} results folder(s) differ", names.len());
    }
    Ok(())
}
