//! `dpca compare` and `dpca verify`: identical folders agree; a metric moved beyond the
//! tolerance and a changed round count are differences named by file, line, run, column and
//! both values; re-running a committed quick manifest reproduces its CSVs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dpca(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A committed results folder with its CSVs copied into `dir`.
fn copy_of(committed: &str, dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(committed);
    let to = dir.join("copy");
    std::fs::create_dir_all(&to).unwrap();
    for f in ["summary.csv", "trace.csv", "spectra.csv", "run.json"] {
        if from.join(f).exists() {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    }
    to
}

const FOLDER: &str = "results/dcfpca/fig1_n1000/quick";

/// The CSV's rows, header first.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    r.records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

fn write_rows(path: &Path, rows: &[Vec<String>]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
}

fn col(rows: &[Vec<String>], name: &str) -> usize {
    rows[0].iter().position(|h| h == name).unwrap()
}

#[test]
fn identical_folders_and_roots_match() {
    let out = dpca(&["compare", FOLDER, FOLDER]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("identical"), "{}", text(&out));
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_of(FOLDER, tmp.path());
    // Times differ from run to run: they are not compared.
    let trace = copy.join("trace.csv");
    let mut t = rows(&trace);
    let c = col(&t, "time_s");
    t[1][c] = "12345.6".into();
    write_rows(&trace, &t);
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("identical"), "{}", text(&out));
    // A metric moved within the tolerance: a match, no longer identical, its size reported.
    let m = col(&t, "bytes_down") + 2;
    let v: f64 = t[3][m].parse().unwrap();
    t[3][m] = format!("{:e}", v * (1.0 + 4e-12));
    write_rows(&trace, &t);
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap()]);
    let s = text(&out);
    assert!(out.status.success(), "{s}");
    assert!(
        s.contains(": match (") && s.contains("largest difference 4.00e-12"),
        "{s}"
    );
}

#[test]
fn a_metric_beyond_the_tolerance_is_named_with_both_values() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_of(FOLDER, tmp.path());
    let trace = copy.join("trace.csv");
    let mut t = rows(&trace);
    // The third data row (line 4 of the file): its first metric after the fixed columns.
    let c = col(&t, "bytes_down") + 2;
    let (name, old) = (t[0][c].clone(), t[3][c].clone());
    let new = format!("{:e}", old.parse::<f64>().unwrap() * (1.0 + 1e-6));
    t[3][c] = new.clone();
    write_rows(&trace, &t);
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap()]);
    let s = text(&out);
    assert_eq!(out.status.code(), Some(1), "{s}");
    let line = s
        .lines()
        .find(|l| l.starts_with("trace.csv"))
        .unwrap_or_else(|| panic!("{s}"));
    let round = &t[3][col(&t, "round")];
    for want in [
        " 4 ",
        &format!("round {round} "),
        &name,
        &old,
        &new,
        "1.00e-6",
    ] {
        assert!(line.contains(want), "{want:?} not in {line:?}\n{s}");
    }
    // Within a looser tolerance it agrees.
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap(), "--rtol", "1e-5"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// The resolved parameters (summary.csv's `p_` columns) are compared like any other column.
#[test]
fn a_changed_parameter_is_a_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_of(FOLDER, tmp.path());
    let summary = copy.join("summary.csv");
    let mut s = rows(&summary);
    let c = s[0].iter().position(|h| h.starts_with("p_")).unwrap();
    let (name, old) = (s[0][c].clone(), s[1][c].clone());
    s[1][c] = format!("{old}9");
    write_rows(&summary, &s);
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap()]);
    let text = text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("summary.csv") && l.contains(&name) && l.contains(&old)),
        "{text}"
    );
}

#[test]
fn a_changed_round_count_is_a_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_of(FOLDER, tmp.path());
    // The first run stops one round earlier: its last trace row goes, its summary says so.
    let (trace, summary) = (copy.join("trace.csv"), copy.join("summary.csv"));
    let mut s = rows(&summary);
    let rounds_col = col(&s, "rounds");
    let rounds: u64 = s[1][rounds_col].parse().unwrap();
    s[1][rounds_col] = (rounds - 1).to_string();
    let (m, seed) = (
        s[1][col(&s, "method")].clone(),
        s[1][col(&s, "seed")].clone(),
    );
    write_rows(&summary, &s);
    let mut t = rows(&trace);
    let (tm, ts, tr) = (col(&t, "method"), col(&t, "seed"), col(&t, "round"));
    let last = t
        .iter()
        .rposition(|r| r[tm] == m && r[ts] == seed && r[tr] == rounds.to_string())
        .unwrap();
    t.remove(last);
    write_rows(&trace, &t);
    let out = dpca(&["compare", FOLDER, copy.to_str().unwrap()]);
    let text = text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("summary.csv")
            && l.contains("rounds")
            && l.contains(&rounds.to_string())
            && l.contains(&(rounds - 1).to_string())),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("trace.csv") && l.contains("1 only in A")),
        "{text}"
    );
}

#[test]
fn verify_reproduces_a_committed_quick_manifest() {
    // One small manifest in an experiments folder of its own; the committed results are read only.
    let tmp = tempfile::tempdir().unwrap();
    let exps = tmp.path().join("experiments/dcfpca");
    std::fs::create_dir_all(&exps).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/dcfpca/fig1_n1000.toml"),
        exps.join("fig1_n1000.toml"),
    )
    .unwrap();
    let cache = tmp.path().join("cache");
    let out = dpca(&[
        "verify",
        tmp.path().join("experiments").to_str().unwrap(),
        "--profile",
        "quick",
        "--cache",
        cache.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let s = text(&out);
    assert!(out.status.success(), "{s}");
    // Bit for bit on this machine, kernels named on both sides.
    assert!(
        s.lines().any(|l| l.starts_with("dcfpca/fig1_n1000/quick")
            && l.contains("identical")
            && l.contains("equal")
            && l.contains("Haswell+avx")),
        "{s}"
    );
    // A manifest named directly, and a path that is neither manifest nor folder.
    let manifest = exps.join("fig1_n1000.toml");
    let args = ["--profile", "quick", "--cache", cache.to_str().unwrap()];
    let out = dpca(&[&["verify", manifest.to_str().unwrap()][..], &args].concat());
    assert!(out.status.success(), "{}", text(&out));
    let out = dpca(&[&["verify", "no/such.toml"][..], &args].concat());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no/such.toml: no such manifest or folder"));
    // Nothing written beside the committed results.
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(FOLDER);
    assert!(!committed.join("runs").exists());
}

/// The attack's errors below ATTACK_NOISE are rounding: two runs that both reach it agree
/// whatever their values there; above it they are compared as every metric is.
#[test]
fn attack_errors_below_the_noise_floor_are_not_compared() {
    const LEAKY: &str = "results/faps/fig1a/quick";
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_of(LEAKY, tmp.path());
    let trace = copy.join("trace.csv");
    let mut t = rows(&trace);
    let (c, abs) = (col(&t, "leak_err"), col(&t, "leak_abs"));
    let value = |r: &Vec<String>| r[c].parse::<f64>().ok();
    let low = (1..t.len())
        .find(|&i| value(&t[i]).is_some_and(|v| v > 0.0 && v <= 1e-7))
        .expect("fig1a's SSI attack gets below 1e-7");
    let high = (1..t.len())
        .find(|&i| value(&t[i]).is_some_and(|v| v > 1e-3))
        .expect("an early round above 1e-3");
    for (i, k) in [(c, 3.0), (abs, 3.0)] {
        let v: f64 = t[low][i].parse().unwrap();
        t[low][i] = format!("{:e}", v * k);
    }
    write_rows(&trace, &t);
    let out = dpca(&["compare", LEAKY, copy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let v: f64 = t[high][c].parse().unwrap();
    t[high][c] = format!("{:e}", v * 1.01);
    write_rows(&trace, &t);
    let out = dpca(&["compare", LEAKY, copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("leak_err"), "{}", text(&out));
}
