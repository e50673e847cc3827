//! `dpca render`: a results folder's report and figures again, from its CSVs.

use anyhow::{Context, Result};
use dpca_bench::plan;
use dpca_bench::report;
use dpca_bench::util::FolderLock;
use std::path::Path;

use super::common::{manifest_of, profile_for};

pub fn render(target: &Path, profile: Option<&str>, results: &Path) -> Result<()> {
    let (path, profile) = if target.is_dir() {
        let json = target.join("run.json");
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&json)
                .with_context(|| format!("cannot read {}", json.display()))?,
        )
        .with_context(|| format!("{} is not valid JSON", json.display()))?;
        let profile = v["profile"]
            .as_str()
            .with_context(|| format!("{}: no profile", json.display()))?
            .to_string();
        (manifest_of(target)?, profile)
    } else {
        let given = profile.map(str::to_string);
        (target.to_path_buf(), profile_for(target, &given)?)
    };
    let exp = plan::load(&path, &profile)?;
    let dir = if target.is_dir() {
        target.to_path_buf()
    } else {
        results.join(&exp.paper).join(&exp.id).join(&exp.profile)
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
