//! `dpca render`: a results folder's report and figures again, from its CSVs.

use anyhow::Result;
use dpca_bench::plan;
use dpca_bench::report;
use dpca_bench::util::FolderLock;
use std::path::Path;

use super::common::{profile_for, recorded};

pub fn render(target: &Path, profile: Option<&str>, results: &Path) -> Result<()> {
    let exp = if target.is_dir() {
        recorded(target)?
    } else {
        let given = profile.map(str::to_string);
        plan::load(target, &profile_for(target, &given)?)?
    };
    let path = &exp.path;
    let dir = if target.is_dir() {
        target.to_path_buf()
    } else {
        results.join(&exp.paper).join(&exp.id).join(&exp.folder)
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: no results to re-render (run `dpca run {} --profile {}` first)",
            dir.display(),
            path.display(),
            exp.profile
        );
    }
    let _lock = FolderLock::acquire(&dir)?;
    let out = report::reload::outcome_from_csv(&exp, &dir)?;
    report::write_all(&exp, &out)?;
    println!("{}: re-rendered {} runs", dir.display(), out.records.len());
    Ok(())
}
