//! Deterministic fuzzing of the manifest parser and validator (cargo-fuzz needs nightly): start
//! from every manifest under experiments/, mutate lines and values with a fixed-seed RNG, load
//! the result at both profiles inside `catch_unwind`, and require no panic and, on rejection, a
//! message naming the file.
//!
//! Cases: `DPCA_FUZZ_CASES` (default 1500); `DPCA_FUZZ_SECONDS` stops early; `DPCA_FUZZ_SEED`
//! changes the seed. A long run:
//!
//!     DPCA_FUZZ_CASES=100000000 DPCA_FUZZ_SECONDS=600 cargo test --release --features mpi \
//!         --test lib -- manifest_fuzz:: --nocapture

use dpca_bench::plan;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().parse().expect("a number"))
}

fn seeds() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Values that break sizes, counts, tolerances, names and types.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "1.5",
    "-0.0",
    "1e308",
    "-1e308",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967297",
    "1000000000000",
    "\"\"",
    "\"../x\"",
    "\"/abs\"",
    "\"a/b\"",
    "\"x\"",
    "true",
    "[]",
    "[0]",
    "[1, 2, 3]",
    "{}",
    "{ a = 1 }",
    "[[1]]",
];

fn mutate(rng: &mut ChaCha8Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..rng.random_range(1..=3) {
        if lines.is_empty() {
            break;
        }
        let i = rng.random_range(0..lines.len());
        match rng.random_range(0..8) {
            // Replace the value of a `key = value` line.
            0..=2 => {
                if let Some(eq) = lines[i].find(" = ") {
                    let v = VALUES.choose(rng).unwrap();
                    lines[i] = format!("{} = {v}", &lines[i][..eq]);
                }
            }
            3 => {
                lines.remove(i);
            }
            4 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            5 => {
                let j = rng.random_range(0..lines.len());
                lines.swap(i, j);
            }
            6 => {
                let cut = rng.random_range(0..=lines[i].len());
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| lines[i].is_char_boundary(c))
                    .unwrap();
                lines[i].truncate(cut);
            }
            _ => {
                let b = ['[', ']', '"', '=', '{', '}', ',', '\u{0}', '#', 'é']
                    .choose(rng)
                    .unwrap();
                let at = rng.random_range(0..=lines[i].len());
                let at = (0..=at)
                    .rev()
                    .find(|&c| lines[i].is_char_boundary(c))
                    .unwrap();
                lines[i].insert(at, *b);
            }
        }
    }
    let mut out = lines.join("\n");
    if rng.random_bool(0.05) {
        let cut = rng.random_range(0..=out.len());
        let cut = (0..=cut).rev().find(|&c| out.is_char_boundary(c)).unwrap();
        out.truncate(cut);
    }
    out
}

#[test]
fn mutated_manifests_never_panic_and_errors_name_the_file() {
    let seeds = seeds();
    assert!(!seeds.is_empty());
    let cases = env_num("DPCA_FUZZ_CASES").unwrap_or(1500);
    let deadline = env_num("DPCA_FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let seed = env_num("DPCA_FUZZ_SEED").unwrap_or(0x3a41_f35f);
    let dir = tempfile::tempdir().unwrap();
    let (mut done, mut accepted) = (0u64, 0u64);
    let mut failures = Vec::new();
    let started = Instant::now();
    for k in 0..cases {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let (orig, text) = seeds.choose(&mut rng).unwrap();
        // Same file name as the original, so that `id` still matches unless mutated.
        let path = dir.path().join(orig.file_name().unwrap());
        let text = mutate(&mut rng, text);
        std::fs::write(&path, &text).unwrap();
        for profile in ["paper", "quick"] {
            match catch_unwind(AssertUnwindSafe(|| plan::load(&path, profile))) {
                Ok(Ok(_)) => accepted += 1,
                Ok(Err(e)) => {
                    let msg = e.to_string();
                    if !msg.contains(&*path.to_string_lossy()) {
                        failures.push(format!(
                            "case {k} ({profile}): error without the file: {msg}"
                        ));
                    }
                }
                Err(_) => failures.push(format!(
                    "case {k} ({profile}) from {}: PANIC on\n{text}",
                    orig.display()
                )),
            }
        }
        done += 1;
    }
    eprintln!(
        "manifest fuzz: {done} cases ({accepted} loads accepted) from {} seeds in {:.0} s",
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(5)].join("\n\n")
    );
}
