//! `dpca attack`: the data-leakage attack (FAPS fig. 1) on every method of a manifest.

use anyhow::Result;
use dpca_bench::plan;
use dpca_bench::progress::Progress;
use dpca_bench::report;
use dpca_bench::run::{self, Options};
use dpca_bench::util::FolderLock;
use std::path::Path;

use super::common::{manifest_of, profile_for, recorded};

pub fn attack(target: &Path, profile: Option<&str>, target_err: f64, opts: &Options) -> Result<()> {
    // A results folder: the experiment its run.json records (profile and `--set` entries).
    let exp = if target.is_dir() && profile.is_none() {
        recorded(target)?
    } else {
        let path = manifest_of(target)?;
        plan::load(&path, &profile_for(&path, &profile.map(str::to_string))?)?
    };
    let profile = &exp.folder;
    let _lock = FolderLock::acquire(&run::results_dir(&exp, opts))?;
    let progress = Progress::new();
    let out = run::run_experiment(&exp, opts, &progress)?;
    report::write_all(&exp, &out)?;
    let client = opts.attack.as_ref().map_or(1, |a| a.client);
    println!(
        "leakage attack on client {client} ({}, profile {profile}):",
        exp.id
    );
    println!(
        "{:<12} {:<40} {:>7} {:>16} {:>12}",
        "point", "method", "rounds", "first ≤ target", "final error"
    );
    for r in &out.records {
        let first = r.first_round_below(|t| t.leak_err, target_err);
        let last = r.trace.iter().rev().find_map(|t| t.leak_err);
        println!(
            "{:<12} {:<40} {:>7} {:>16} {:>12}",
            r.key.point,
            run::describe(&r.key),
            r.rounds,
            first.map_or("never".into(), |k| format!("round {k}")),
            last.map_or("—".into(), |e| format!("{e:.2e}")),
        );
    }
    println!(
        "(target {target_err:e}; per-round errors in {}/trace.csv, column leak_err)",
        out.dir.display()
    );
    Ok(())
}
