//! The criterion benches, one binary of modules (`harness = false`): each module's `benches`
//! builds its data and times it. DPCA_BENCH names the modules to run (space or comma
//! separated; `make bench BENCH=rounds` sets it); unset or empty, all of them. Criterion's own
//! filter (`make bench ARGS=...`) selects benches inside the modules run, not modules: their
//! data, warm-ups and "once" timings run whatever it says.

mod common;
mod twin;

mod families;
mod libsvm;
mod robust;
mod rounds;
mod sparse;

use criterion::Criterion;

/// Every module by the name DPCA_BENCH selects it with, in the order they run.
const MODULES: &[(&str, fn(&mut Criterion))] = &[
    ("families", families::benches),
    ("libsvm", libsvm::benches),
    ("robust", robust::benches),
    ("rounds", rounds::benches),
    ("sparse", sparse::benches),
];

fn main() {
    let chosen = std::env::var("DPCA_BENCH").unwrap_or_default();
    let chosen: Vec<&str> = chosen.split([' ', ',']).filter(|s| !s.is_empty()).collect();
    let known: Vec<&str> = MODULES.iter().map(|(name, _)| *name).collect();
    if let Some(bad) = chosen.iter().find(|c| !known.contains(c)) {
        eprintln!(
            "DPCA_BENCH: no bench module {bad:?}; the modules are {}",
            known.join(", ")
        );
        std::process::exit(2);
    }
    let mut c = Criterion::default().configure_from_args();
    for (name, benches) in MODULES {
        if chosen.is_empty() || chosen.contains(name) {
            benches(&mut c);
        }
    }
    c.final_summary();
}
