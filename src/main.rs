//! `dpca`: command-line front end. `main`, the MPI ranks and exit codes; the commands are in
//! src/cli/.

mod cli;

use anyhow::Result;
use clap::Parser;
use cli::{dispatch, Cli, UsageError};
#[cfg(feature = "mpi")]
use cli::{setup, Common};
use dpca_bench::linalg;
#[cfg(feature = "mpi")]
use dpca_bench::run::Backend;
use dpca_bench::spec::ManifestError;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before anything else: OpenBLAS fixed its kernels when it loaded, so pinning them means
    // starting again with OPENBLAS_CORETYPE set (src/linalg/blas_pin.rs).
    if let Err(e) = linalg::blas_pin::pin_by_reexec() {
        return exit(Err(UsageError(format!("{e:#}")).into()));
    }
    let cli = Cli::parse();
    #[cfg(feature = "mpi")]
    if let Some(common) = cli.common().filter(|c| c.backend == Backend::Mpi).cloned() {
        return mpi_main(cli, &common);
    }
    // Rust ignores SIGPIPE, so a write to a closed pipe (`dpca list | head`) is an error that
    // println! turns into a panic. With the default action the process ends quietly, as other
    // command-line tools do. (Not under MPI, whose sockets handle their own errors.)
    // SAFETY: setting a signal's disposition to its default, before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    exit(dispatch(cli))
}

/// Every rank of an `mpirun` job: rank 0 runs the command, the others serve its clients. Every
/// rank exits with failure when any failed.
#[cfg(feature = "mpi")]
fn mpi_main(cli: Cli, common: &Common) -> ExitCode {
    use dpca_bench::fed::mpi;
    let universe = match mpi::initialize() {
        Ok(u) => u,
        Err(e) => return exit(Err(e)),
    };
    let rank = mpi::rank();
    mpi::set_reply_timeout(common.mpi_timeout);
    if rank == 0 {
        // Heartbeats to the other ranks, whatever rank 0 is busy with, until mpi::finish: they
        // tell a busy rank 0 from a stopped one.
        mpi::keep_alive();
    }
    if rank != 0 {
        let result = dpca_bench::run::mpi::worker(setup(common), &own_manifests(&cli));
        drop(universe);
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            // Rank 0 printed the fault and exits with its status (2 for a manifest error, as
            // locally), which mpirun returns; a second line and status here would only blur it.
            Err(e) if e.is::<dpca_bench::run::mpi::RankZeroFailed>() => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rank {rank}: stopped: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
        .unwrap_or_else(|p| {
            Err(anyhow::anyhow!(
                "panicked: {}",
                dpca_bench::util::panic_message(p.as_ref())
            ))
        });
    if mpi::stalled() {
        // A rank stopped answering: it would never take part in the broadcast that ends the
        // job, nor in MPI's finalisation. Say why once, then have mpirun kill every rank.
        let _ = exit(result);
        mpi::abort(1);
    }
    mpi::finish(result.as_ref().err().map(|e| format!("{e:#}")));
    drop(universe);
    exit(result)
}

/// The manifests (or the folder of them) this rank's own command line names: a worker refuses a
/// run of any other (ranks started with different arguments, as mpirun's `A : B` form allows).
#[cfg(feature = "mpi")]
fn own_manifests(cli: &Cli) -> Vec<std::path::PathBuf> {
    use cli::Command;
    match &cli.command {
        Command::Run { manifests, .. } => manifests.clone(),
        // A results folder names its manifest in run.json: only a manifest itself is checked.
        Command::Attack { target, .. } if target.extension().is_some_and(|e| e == "toml") => {
            vec![target.clone()]
        }
        Command::Reproduce { experiments, .. } => vec![experiments.clone()],
        _ => Vec::new(),
    }
}

/// The exit status of a command, its error printed.
fn exit(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            // Bad user input (manifest, parameters, names) exits 2; anything else 1.
            if e.chain()
                .any(|c| c.is::<ManifestError>() || c.is::<UsageError>())
            {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
