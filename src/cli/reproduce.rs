//! `dpca reproduce`: every manifest with the profile, a missing dataset skipped.

use anyhow::Result;
use dpca_bench::data::prepare::DatasetAbsent;
use dpca_bench::progress::Progress;
use dpca_bench::run::Options;
use dpca_bench::spec;
use std::path::Path;

use super::common::{manifests_under, run_manifest};

pub fn reproduce(dir: &Path, profile: &str, opts: &Options) -> Result<()> {
    let progress = Progress::new();
    let manifests = manifests_under(dir)?;
    let bar = progress.runs(manifests.len() as u64, "reproduce");
    let mut failed = Vec::new();
    for path in &manifests {
        let has_profile = spec::profile_names(path).map(|p| p.iter().any(|x| x == profile));
        match has_profile {
            Ok(true) => {
                match run_manifest(path, profile, &[], opts, &progress) {
                    Ok(()) => {}
                    // A dataset that is not here: one line with the fetch command, then go on.
                    Err(e) if e.chain().any(|c| c.is::<DatasetAbsent>()) => {
                        progress.log(format!("skipped {}: {e}", path.display()))
                    }
                    Err(e) => {
                        progress.log(format!("error: {}: {e:#}", path.display()));
                        failed.push(path.display().to_string());
                    }
                }
            }
            Ok(false) => progress.log(format!(
                "{}: no `{profile}` profile, skipped",
                path.display()
            )),
            Err(e) => {
                progress.log(format!("error: {e}"));
                failed.push(path.display().to_string());
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{} manifest(s) failed: {}", failed.len(), failed.join(", "))
    }
}
