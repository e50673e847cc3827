//! Integration tests that drive other processes: the `dpca` binary (also under `mpirun`) and
//! headless Chromium. One binary of modules, so the library is linked once for all of them
//! (`cargo test --test cli -- run::` runs one module).

mod hardening;
mod html_report;
/// Sizes checked against the memory budget before they are allocated.
mod memory;
/// `dpca methods [NAME]`.
mod methods;
mod mpi;
mod own_data;
mod results_faults;
/// `dpca run` end to end (and the CLI's errors and pipes).
mod run;
/// `dpca report`'s scorecard and `dpca scorecard` on a crafted project.
mod scorecard;
/// `--set`, path spelling, sweeps of whole sections.
mod variants;
mod verify;
