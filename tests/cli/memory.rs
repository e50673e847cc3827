//! Abort class: every size a file or a manifest declares is checked against the memory budget
//! before anything that size is allocated (or a file that size read or hashed): a .npy header
//! of 10⁶ × 10⁶, a LIBSVM feature index of 4·10⁹, a manifest's n = 4·10⁹, a CSV growing past
//! the budget. Each is a clean error naming the file or key, the size and the budget, given at
//! once under a 4 GiB address-space limit (`ulimit -v`), where an attempt would abort.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const HEAD: &str = r#"paper = "mine"
paper_file = "none"
title = "memory"
reproduces = "nothing"
seed = 3

[partition]
scheme = "even"
clients = 1

[problem]
p = 1

[stop]
max_rounds = 30
objective_tol = 1e-12

[[methods]]
name = "ssi"

[profiles.quick]
"#;

fn manifest(root: &Path, id: &str, data: &str) {
    std::fs::create_dir_all(root.join("exp/data")).unwrap();
    let text = format!("id = \"{id}\"\n{HEAD}\n[data]\n{data}\n");
    std::fs::write(root.join(format!("exp/{id}.toml")), text).unwrap();
}

/// `dpca run exp/<id>.toml` under `ulimit -v` 4 GiB with `env` set; its output and duration.
fn run_limited(root: &Path, id: &str, env: &[(&str, &str)]) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new("sh")
        .args(["-c", "ulimit -v 4194304 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_dpca"))
        .args(["run", &format!("exp/{id}.toml"), "--profile", "quick"])
        .args(["--threads", "1", "--results", "results", "--cache", "cache"])
        .envs(env.iter().copied())
        .current_dir(root)
        .output()
        .unwrap();
    (out, start.elapsed())
}

/// Refused: exit 2 within 10 s, the message naming every needle and the budget, nothing stored.
fn refused(root: &Path, id: &str, env: &[(&str, &str)], needles: &[&str]) {
    let (out, took) = run_limited(root, id, env);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{id}: {e}");
    assert!(took < Duration::from_secs(10), "{id}: {took:?}");
    for needle in needles
        .iter()
        .chain(&["need at least", "refused before allocating"])
    {
        assert!(e.contains(needle), "{id}: no {needle:?} in: {e}");
    }
    assert!(
        !e.contains("panicked") && !e.contains("memory allocation"),
        "{e}"
    );
    // The folder's lock may be there (taken before the check), no data file.
    let written: Vec<_> = walk(&root.join("results"))
        .into_iter()
        .filter(|p| !p.ends_with(".lock"))
        .collect();
    assert!(written.is_empty(), "{id} wrote {written:?}");
}

/// Every file under `dir` (none if it does not exist).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// A .npy file whose header declares `shape` of float64, as long as the header says (a sparse
/// file: no disk is used). None where the file system has no sparse files.
fn npy_declaring(path: &Path, shape: (u64, u64)) -> Option<()> {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        shape.0, shape.1
    );
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header);
    std::fs::write(path, &bytes).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(bytes.len() as u64 + 8 * shape.0 * shape.1).ok()
}

#[test]
fn abort_a_npy_header_beyond_the_budget_is_refused_before_the_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    manifest(
        root,
        "huge",
        "generator = \"file\"\nsource = \"data/huge.npy\"",
    );
    if npy_declaring(&root.join("exp/data/huge.npy"), (1_000_000, 1_000_000)).is_none() {
        eprintln!("no sparse files here: skipped");
        return;
    }
    // 8 TB of zeros: hashing them first would take hours, reading them abort.
    refused(
        root,
        "huge",
        &[],
        &[
            "huge.npy",
            "key `data.source`",
            "(1000000, 1000000)",
            "MemAvailable",
        ],
    );
}

#[test]
fn abort_a_libsvm_index_of_4e9_is_refused_before_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    manifest(
        root,
        "wide",
        "generator = \"file\"\nsource = \"data/wide.svm\"",
    );
    let text = "1 1:0.5 4000000000:1.0\n0 2:1.0 3:2\n1 1:1 5:1\n";
    std::fs::write(root.join("exp/data/wide.svm"), text).unwrap();
    refused(
        root,
        "wide",
        &[],
        &[
            "key `data.n`",
            "n = 4000000000",
            "reference's working memory",
        ],
    );
}

#[test]
fn abort_a_manifest_n_of_4e9_is_refused_before_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The features of a LIBSVM file, declared (trailing ones may be all zero).
    let data = "generator = \"file\"\nsource = \"data/few.svm\"\nn = 4000000000";
    manifest(root, "tall", data);
    let text = "1 1:0.5 3:1.0\n0 2:1.0 3:2\n1 1:1 2:1\n";
    std::fs::write(root.join("exp/data/few.svm"), text).unwrap();
    refused(root, "tall", &[], &["key `data.n`", "n = 4000000000"]);
}

/// A CSV is checked as it grows: past a budget of 1 MiB, at the line that crossed it. A labels
/// file without newlines is refused at its first 1 KiB, not read whole into one line.
#[test]
fn abort_text_files_are_refused_as_they_grow_past_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    manifest(
        root,
        "grows",
        "generator = \"file\"\nsource = \"data/x.csv\"",
    );
    let row = vec!["1"; 1000].join(",") + "\n";
    let rows: Vec<String> = (0..1300)
        .map(|i| row.replacen('1', &(i % 7 + 1).to_string(), 1))
        .collect();
    std::fs::write(root.join("exp/data/x.csv"), rows.concat()).unwrap();
    let budget = [("DPCA_MEMORY_BUDGET", "1M")];
    refused(
        root,
        "grows",
        &budget,
        &[
            "x.csv",
            "line ",
            "numbers read up to here",
            "DPCA_MEMORY_BUDGET of 0.001 GiB",
        ],
    );
    // Within the default budget the same file loads (the refusal was the budget's).
    let (out, _) = run_limited(root, "grows", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!e.contains("need at least"), "{e}");

    manifest(
        root,
        "labels",
        "generator = \"file\"\nsource = \"data/x.csv\"\nlabels = \"data/one_line.txt\"",
    );
    std::fs::write(root.join("exp/data/one_line.txt"), "1 ".repeat(5000)).unwrap();
    let (out, _) = run_limited(root, "labels", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    for needle in [
        "one_line.txt",
        "line 1 is longer than 1024 bytes",
        "data.labels",
    ] {
        assert!(e.contains(needle), "no {needle:?} in: {e}");
    }

    // A CSV without newlines (a sparse file of 300 MiB of NUL bytes) is not read into one line.
    manifest(
        root,
        "flat",
        "generator = \"file\"\nsource = \"data/flat.csv\"",
    );
    let flat = std::fs::File::create(root.join("exp/data/flat.csv")).unwrap();
    flat.set_len(300 << 20).unwrap();
    let (out, _) = run_limited(root, "flat", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    for needle in [
        "flat.csv",
        "a line longer than 268435456 bytes",
        "data.source",
    ] {
        assert!(e.contains(needle), "no {needle:?} in: {e}");
    }

    let (out, _) = run_limited(root, "grows", &[("DPCA_MEMORY_BUDGET", "lots")]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("DPCA_MEMORY_BUDGET = \"lots\""), "{e}");
}
