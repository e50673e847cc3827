//! What the commands share: the worker set-up, the usage error, and finding manifests.

use anyhow::{Context, Result};
use dpca_bench::plan;
use dpca_bench::progress::Progress;
use dpca_bench::run::{self, Backend, Options};
use dpca_bench::spec;
use dpca_bench::util::{remove_bare_folders, FolderLock};
use dpca_bench::{linalg, report};
use std::path::{Path, PathBuf};

use super::args::Common;

/// A mistake in the command line itself (an unknown name): exit status 2, like a bad manifest.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// More worker threads than this per core only add contention; far more exhaust the machine.
const MAX_THREADS_PER_CORE: usize = 4;

pub fn setup(common: &Common) -> Result<Options> {
    let _ = report::provenance::pin_git_revision();
    let opts = common.options();
    if !opts.memory_check {
        dpca_bench::util::memory::disable();
    }
    if opts.backend == Backend::Mpi && !cfg!(feature = "mpi") {
        return Err(UsageError(run::MPI_NOT_BUILT.into()).into());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if opts.threads == 0 || opts.threads > MAX_THREADS_PER_CORE * cores {
        anyhow::bail!(
            "--threads {}: expected 1 to {} ({MAX_THREADS_PER_CORE} per core; this machine has {cores})",
            opts.threads,
            MAX_THREADS_PER_CORE * cores
        );
    }
    linalg::force_single_threaded_blas();
    linalg::gram_product::select_kernel().map_err(|e| UsageError(format!("{e:#}")))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build_global()
        .context("starting the worker threads")?;
    Ok(opts)
}

pub fn run_manifest(
    path: &Path,
    profile: &str,
    sets: &[spec::Set],
    opts: &Options,
    progress: &Progress,
) -> Result<()> {
    let exp = plan::load_with(path, profile, sets)?;
    let dir = run::results_dir(&exp, opts);
    let fresh = !dir.exists();
    let lock = FolderLock::acquire(&dir)?;
    let out = match run::run_experiment(&exp, opts, progress) {
        Ok(out) => out,
        Err(e) => {
            drop(lock);
            // Refused before any run was stored (the rank rule, a reference that cannot be
            // built): the folders this call made hold nothing, so none is left behind. A
            // concurrent run of the same manifest meets the same refusal.
            if fresh {
                remove_bare_folders(&dir, &opts.results_root);
            }
            return Err(e);
        }
    };
    report::write_all(&exp, &out)?;
    progress.log(format!("{}: results in {}", exp.id, out.dir.display()));
    Ok(())
}

/// Every *.toml under `dir`, sorted (see [`spec::manifests_under`]).
pub fn manifests_under(dir: &Path) -> Result<Vec<PathBuf>> {
    spec::manifests_under(dir).with_context(|| format!("cannot read folder {}", dir.display()))
}

/// The profile asked for, or the manifest's default one.
pub fn profile_for(path: &Path, given: &Option<String>) -> Result<String> {
    Ok(match given {
        Some(p) => p.clone(),
        None => spec::default_profile(path)?.to_string(),
    })
}

/// The experiment a results folder's run.json records: its manifest, profile and `--set` list.
pub fn recorded(dir: &Path) -> Result<spec::Experiment> {
    let json = dir.join("run.json");
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .with_context(|| format!("cannot read {}", json.display()))?,
    )
    .with_context(|| format!("{} is not valid JSON", json.display()))?;
    plan::load_recorded(&v).with_context(|| format!("the manifest of {}", json.display()))
}

/// The manifest behind `target`: the file itself, or the one named by a results folder's run.json.
pub fn manifest_of(target: &Path) -> Result<PathBuf> {
    if target.is_dir() {
        let json = target.join("run.json");
        let text = std::fs::read_to_string(&json).with_context(|| {
            format!(
                "{} is not a results folder: no readable run.json",
                target.display()
            )
        })?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", json.display()))?;
        let path = v["manifest"]["path"]
            .as_str()
            .with_context(|| format!("{}: no manifest.path", json.display()))?;
        Ok(PathBuf::from(path))
    } else {
        Ok(target.to_path_buf())
    }
}
