//! Deterministic fuzzing of the results readers (issue 41): a committed results folder's
//! summary.csv, trace.csv and run.json, mutated with a fixed-seed RNG, read back by `render`'s
//! reader (`outcome_from_csv`), `check` (`check_complete`) and `compare` (`compare_folders`)
//! inside `catch_unwind`: no panic, whatever the bytes. `DPCA_FUZZ_CASES` (default 150),
//! `DPCA_FUZZ_SECONDS` and `DPCA_FUZZ_SEED` as for the loaders' fuzzing.

use dpca_bench::plan;
use dpca_bench::report::compare::{compare_folders, Tolerance};
use dpca_bench::report::{check_complete, reload::outcome_from_csv};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

const FOLDER: &str = "results/faps/table4/quick";
const FILES: [&str; 3] = ["summary.csv", "trace.csv", "run.json"];
/// Cells a hostile or damaged folder holds.
const CELLS: [&str; 14] = [
    "",
    "inf",
    "-inf",
    "NaN",
    "1e309",
    "-0",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "\u{1b}[2J",
    "\"",
    "[x](javascript:alert(1))",
    "0x10",
    "1,2",
];

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// One random change to `text`: a byte, a cell, a line removed or repeated, a cut.
fn mutate(rng: &mut ChaCha8Rng, text: &mut Vec<u8>) {
    if text.is_empty() {
        return;
    }
    let at = rng.random_range(0..text.len());
    match rng.random_range(0..6) {
        0 => text[at] = rng.random(),
        1 => text.truncate(at),
        2 => {
            let cell = CELLS.choose(rng).unwrap().as_bytes();
            let end = text[at..]
                .iter()
                .position(|&b| b == b',' || b == b'\n')
                .map_or(text.len(), |k| at + k);
            text.splice(at..end, cell.iter().copied());
        }
        3 | 4 => {
            let start = text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |k| k + 1);
            let end = text[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |k| at + k + 1);
            let line = text[start..end].to_vec();
            if rng.random_bool(0.5) {
                text.drain(start..end);
            } else {
                let times = rng.random_range(1..50);
                for _ in 0..times {
                    text.splice(start..start, line.iter().copied());
                }
            }
        }
        _ => text.insert(at, *b",\n\"".choose(rng).unwrap()),
    }
}

#[test]
fn results_readers_never_panic_on_mutated_folders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exp = plan::load(&root.join("experiments/faps/table4.toml"), "quick").unwrap();
    let original = root.join(FOLDER);
    let cases = env_num("DPCA_FUZZ_CASES").unwrap_or(150);
    let deadline = env_num("DPCA_FUZZ_SECONDS")
        .map(|s| std::time::Instant::now() + std::time::Duration::from_secs(s));
    let seed = env_num("DPCA_FUZZ_SEED").unwrap_or(0x41);
    let tol = Tolerance {
        rtol: 1e-9,
        atol: 1e-14,
    };
    let (mut accepted, mut refused) = (0, 0);
    let mut findings = Vec::new();
    let mut ran = 0;
    for k in 0..cases {
        if deadline.is_some_and(|d| std::time::Instant::now() > d) {
            break;
        }
        ran += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(k));
        let dir = tempfile::tempdir().unwrap();
        for f in FILES {
            let mut bytes = std::fs::read(original.join(f)).unwrap();
            if rng.random_bool(0.5) {
                for _ in 0..rng.random_range(1..4) {
                    mutate(&mut rng, &mut bytes);
                }
            }
            std::fs::write(dir.path().join(f), bytes).unwrap();
        }
        let read = catch_unwind(AssertUnwindSafe(|| {
            let _ = check_complete(dir.path());
            let _ = compare_folders(&original, dir.path(), tol);
            outcome_from_csv(&exp, dir.path()).is_ok()
        }));
        match read {
            Ok(true) => accepted += 1,
            Ok(false) => refused += 1,
            Err(_) => findings.push(format!("case {k} (seed {seed}): panic")),
        }
    }
    eprintln!(
        "results readers: {ran} cases, {accepted} read, {refused} refused, {} panics",
        findings.len()
    );
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}
