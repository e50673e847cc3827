//! The commands of `dpca`: their arguments ([`args`]), one file per command, and the dispatch.

mod args;
mod attack;
mod common;
mod compare;
mod data;
mod list;
mod methods;
mod render;
mod reproduce;
mod scorecard;
mod verify;

use anyhow::{Context, Result};
use dpca_bench::progress::Progress;
use dpca_bench::report;
use dpca_bench::run::Backend;
use dpca_bench::spec;

pub use args::{Cli, Command, Common};
use attack::attack;
use common::{profile_for, run_manifest};
pub use common::{setup, UsageError};
use compare::compare_dirs;
use data::data;
use list::list;
use methods::{method_params, methods_table};
use render::render;
use reproduce::reproduce;
use scorecard::scorecard;
use verify::verify;

pub fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::List { experiments } => list(&experiments),
        Command::Methods { name: None } => {
            print!("{}", methods_table());
            Ok(())
        }
        Command::Methods { name: Some(name) } => method_params(&name),
        Command::Run {
            manifests,
            sets,
            common,
        } => {
            let sets = sets
                .iter()
                .map(|a| spec::Set::parse(a).map_err(UsageError))
                .collect::<Result<Vec<_>, _>>()?;
            let opts = setup(&common)?;
            let progress = Progress::new();
            for path in &manifests {
                let profile = profile_for(path, &common.profile)?;
                run_manifest(path, &profile, &sets, &opts, &progress)?;
            }
            Ok(())
        }
        Command::Attack {
            target,
            client,
            max_rounds,
            target_err,
            common,
        } => {
            if client == 0 {
                anyhow::bail!("--client 0: clients are numbered from 1");
            }
            if max_rounds == Some(0) {
                anyhow::bail!("--max-rounds 0: must be at least 1 (omit it for every round)");
            }
            if !(target_err.is_finite() && target_err > 0.0) {
                anyhow::bail!("--target-err {target_err}: expected a finite number > 0");
            }
            let mut opts = setup(&common)?;
            opts.attack = Some(spec::AttackSpec {
                client,
                max_rounds,
                unscaled: false,
            });
            attack(&target, common.profile.as_deref(), target_err, &opts)
        }
        Command::Reproduce {
            experiments,
            common,
        } => {
            let opts = setup(&common)?;
            reproduce(
                &experiments,
                common.profile.as_deref().unwrap_or("paper"),
                &opts,
            )
        }
        Command::Data { action, dir } => data(action, &dir),
        Command::Report { results } => {
            let started = std::time::Instant::now();
            let (pages, scored) = report::html::write_site(&results)?;
            println!(
                "{}: {pages} pages{} in {:.1} s",
                results.join("index.html").display(),
                if scored { " and scorecard.csv" } else { "" },
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Scorecard {
            paper,
            profile,
            results,
        } => scorecard(&results, paper.as_deref(), &profile),
        Command::Compare { dir_a, dir_b, tol } => compare_dirs(&dir_a, &dir_b, tol.tolerance()?),
        Command::Verify {
            targets,
            profile,
            results,
            tol,
            threads,
            cache,
            data,
            no_memory_check,
        } => {
            let tol = tol.tolerance()?;
            let scratch = tempfile::Builder::new()
                .prefix("dpca-verify-")
                .tempdir()
                .context("cannot create a scratch folder")?;
            let common = Common {
                profile: Some(profile.clone()),
                methods: Vec::new(),
                seed: None,
                force: false,
                threads,
                results: scratch.path().to_path_buf(),
                cache,
                data,
                no_memory_check,
                // verify re-runs in this process: the scratch results are compared right after.
                backend: Backend::Local,
                mpi_timeout: 600,
            };
            let opts = setup(&common)?;
            verify(&targets, &results, &profile, &opts, tol)
        }
        Command::Check { dirs } => dirs.iter().try_for_each(|d| {
            let n = report::check_complete(d)?;
            println!(
                "{}: complete, {n} files as run.json lists them",
                d.display()
            );
            Ok(())
        }),
        Command::Render {
            targets,
            profile,
            results,
        } => targets
            .iter()
            .try_for_each(|t| render(t, profile.as_deref(), &results)),
    }
}
