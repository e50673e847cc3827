//! A corpus of bad inputs fed to the `dpca` binary, one at a time. For each: no panic, a
//! non-zero exit, a message naming the place (file, line, key or flag), nothing written outside
//! --results and no half-written file inside it. Then the concurrency and interrupted-report
//! cases: two runs on one folder, many concurrent renders, a render killed at random moments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A small valid manifest; every case below breaks one thing in it.
const BASE: &str = r#"id = "base"
paper = "faps"
paper_file = "000_87ac87c3d542a13b.txt"
title = "hardening base"
reproduces = "nothing"
seed = 5

[data]
generator = "svd"
spectrum = "geometric"
n = 20
m = 300
xi = 1.2

[partition]
scheme = "even"
clients = 3

[problem]
p = 2

[stop]
max_rounds = 30
objective_tol = 1e-10

[[methods]]
name = "ssi"
label = "SSI"

[[methods]]
name = "faps"
label = "FAPS"

[[plots]]
file = "kkt"
x = "rounds"
y = "kkt"

[profiles.quick]
"#;

pub(super) fn dpca(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Every file under `dir`, relative to it.
pub(super) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// One bad input: the manifest text (written to `m/<id>.toml`), the arguments, and what the
/// message must name.
struct Case {
    name: String,
    manifest: Option<String>,
    args: Vec<String>,
    expect: Vec<String>,
}

/// Replace the first occurrence of `from` in the base manifest (which must contain it).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "base manifest has no {from:?}");
    BASE.replacen(from, to, 1)
}

pub(super) fn run_args() -> Vec<String> {
    [
        "run",
        "m/base.toml",
        "--profile",
        "quick",
        "--results",
        "res",
        "--cache",
        "cache",
    ]
    .map(String::from)
    .to_vec()
}

fn manifest_case(name: &str, text: String, expect: &[&str]) -> Case {
    Case {
        name: name.into(),
        manifest: Some(text),
        args: run_args(),
        expect: expect.iter().map(|s| s.to_string()).collect(),
    }
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    // Values of the sizes that are wrong in kind or in range; each must name its key.
    let sizes = [
        ("data.n", "n = 20\n"),
        ("data.m", "m = 300\n"),
        ("partition.clients", "clients = 3\n"),
        ("problem.p", "p = 2\n"),
    ];
    let bad_counts = [
        "0",
        "-1",
        "1.5",
        "\"ten\"",
        "true",
        "[1]",
        "9223372036854775807",
        "1000000000000",
        "4294967297",
        "nan",
        "inf",
    ];
    for (key, line) in sizes {
        let leaf = key.rsplit('.').next().unwrap();
        for v in bad_counts {
            let text = edit(line, &format!("{leaf} = {v}\n"));
            cases.push(manifest_case(
                &format!("{key}={v}"),
                text,
                &["base.toml", leaf],
            ));
        }
    }
    // Floats of the data and stop rule.
    for (line, leaf) in [
        ("xi = 1.2\n", "xi"),
        ("objective_tol = 1e-10\n", "objective_tol"),
    ] {
        for v in ["nan", "inf", "-inf", "-1.0", "\"x\""] {
            let text = edit(line, &format!("{leaf} = {v}\n"));
            cases.push(manifest_case(
                &format!("{leaf}={v}"),
                text,
                &["base.toml", leaf],
            ));
        }
    }
    for v in ["0", "-5", "\"many\"", "1e3"] {
        let text = edit("max_rounds = 30\n", &format!("max_rounds = {v}\n"));
        cases.push(manifest_case(
            &format!("max_rounds={v}"),
            text,
            &["base.toml", "max_rounds"],
        ));
    }
    // Names that would become paths outside --results, or are not names at all.
    for v in [
        "../x", "/tmp/abs", "a/b", "", ".hidden", "..", "x\\\\y", "con sole",
    ] {
        let text = edit("paper = \"faps\"", &format!("paper = \"{v}\""));
        cases.push(manifest_case(
            &format!("paper={v}"),
            text,
            &["base.toml", "paper"],
        ));
    }
    for v in ["../../esc", "other", "", "BASE"] {
        let text = edit("id = \"base\"", &format!("id = \"{v}\""));
        cases.push(manifest_case(
            &format!("id={v}"),
            text,
            &["base.toml", "id"],
        ));
    }
    for v in ["../up", "a/b", ".x"] {
        let text = edit(
            "[profiles.quick]",
            &format!("[profiles.quick]\n[profiles.\"{v}\"]"),
        );
        cases.push(Case {
            name: format!("profile={v}"),
            manifest: Some(text),
            args: [
                "run",
                "m/base.toml",
                "--profile",
                v,
                "--results",
                "res",
                "--cache",
                "cache",
            ]
            .map(String::from)
            .to_vec(),
            expect: vec!["base.toml".into(), "profile".into()],
        });
    }
    for v in ["../k", "a/b", ".k", ""] {
        let text = edit("file = \"kkt\"", &format!("file = \"{v}\""));
        cases.push(manifest_case(
            &format!("plot file={v}"),
            text,
            &["base.toml", "file"],
        ));
    }
    // Methods: unknown, wrong case, duplicate labels, bad parameters.
    for (v, key) in [
        ("SSI", "name"),
        ("Faps", "name"),
        ("nosuch", "name"),
        ("", "name"),
        ("ssi ", "name"),
    ] {
        let text = edit("name = \"ssi\"", &format!("name = \"{v}\""));
        cases.push(manifest_case(
            &format!("method={v:?}"),
            text,
            &["base.toml", key],
        ));
    }
    cases.push(manifest_case(
        "duplicate label",
        edit("label = \"FAPS\"", "label = \"SSI\""),
        &["base.toml", "label"],
    ));
    for (param, v) in [
        ("beta0", "inf"),
        ("beta0", "nan"),
        ("beta0", "-1.0"),
        ("beta0", "\"big\""),
        ("inner_steps", "1000000000"),
        ("inner_steps", "-3"),
        ("inner_steps", "0.5"),
        ("max_inner", "99999999"),
        ("period", "0"),
        ("no_such_param", "1"),
        ("theta", "inf"),
        ("eps_x", "nan"),
    ] {
        let text = edit(
            "label = \"FAPS\"",
            &format!("label = \"FAPS\"\nparams = {{ {param} = {v} }}"),
        );
        cases.push(manifest_case(
            &format!("faps {param}={v}"),
            text,
            &["base.toml", param],
        ));
    }
    cases.push(manifest_case(
        "no methods",
        BASE.replace("[[methods]]\nname = \"ssi\"\nlabel = \"SSI\"\n\n", "")
            .replace("[[methods]]\nname = \"faps\"\nlabel = \"FAPS\"\n\n", ""),
        &["base.toml", "methods"],
    ));
    // Partition schemes and the uneven split's arithmetic.
    for (text, key) in [
        ("scheme = \"uneven\"\nunit = 1024819115206086201", "m"),
        ("scheme = \"uneven\"\nunit = 0", "unit"),
        ("scheme = \"uneven\"\nunit = 7", "m"),
        ("scheme = \"sideways\"", "scheme"),
        ("scheme = \"dirichlet\"\nalpha = -1.0", "alpha"),
        ("scheme = \"dirichlet\"\nalpha = nan", "alpha"),
        ("scheme = \"even\"\nunit = 5", "unit"),
    ] {
        let t = edit("scheme = \"even\"", text);
        cases.push(manifest_case(
            &format!("partition {text}"),
            t,
            &["base.toml", key],
        ));
    }
    // Unknown keys and sections, wrong types of whole sections, broken TOML.
    for (from, to, key) in [
        ("[problem]", "[problem]\nq = 3", "q"),
        ("[data]", "[data]\nsize = 3", "size"),
        ("[stop]", "[stop]\nmax_round = 3", "max_round"),
        (
            "[stop]",
            "[stop]\ntarget = { metric = \"nonsense\", value = 1.0 }",
            "metric",
        ),
        ("[stop]", "[stop]\ntime_budget_s = -1.0", "time_budget_s"),
        ("seed = 5", "seed = -5", "seed"),
        ("seed = 5", "seed = \"five\"", "seed"),
        ("seed = 5", "seed = 5\nrepeats = 0", "repeats"),
        ("seed = 5", "seed = 5\nrepeats = -2", "repeats"),
        ("seed = 5", "seed = 5\nunknown_top = 1", "unknown_top"),
        ("generator = \"svd\"", "generator = \"magic\"", "generator"),
        (
            "spectrum = \"geometric\"",
            "spectrum = \"flat\"",
            "spectrum",
        ),
        (
            "[profiles.quick]",
            "[profiles.quick]\ndata = { n = 0 }",
            "n",
        ),
        (
            "[profiles.quick]",
            "[profiles.quick]\nprofiles = {}",
            "profiles",
        ),
        (
            "[profiles.quick]",
            "[profiles.quick]\nsweep = { \"data.n\" = [] }",
            "sweep",
        ),
        (
            "[profiles.quick]",
            "[sweep]\n\"data.nope\" = [1, 2]\n[profiles.quick]",
            "data.nope",
        ),
        (
            "[profiles.quick]",
            "[sweep]\n\"data.n\" = [20, 0]\n[profiles.quick]",
            "n",
        ),
        (
            "[profiles.quick]",
            "[sweep]\n\"data.n\" = \"many\"\n[profiles.quick]",
            "data.n",
        ),
        ("n = 20\n", "n = 20\nn = 21\n", "n"),
        ("[data]", "[data\n", "base.toml"),
        ("xi = 1.2", "xi = ", "base.toml"),
        (
            "title = \"hardening base\"",
            "title = \"unterminated",
            "base.toml",
        ),
    ] {
        cases.push(manifest_case(
            &format!("{from} → {to}"),
            edit(from, to),
            &["base.toml", key],
        ));
    }
    // Data that no machine here holds (16 TB): refused before anything is generated.
    cases.push(manifest_case(
        "8 TB of data",
        edit("n = 20\n", "n = 1000000\n").replacen("m = 300\n", "m = 1000000\n", 1),
        &["base.toml", "data.n", "GiB", "--no-memory-check"],
    ));
    // Files that are not manifests.
    cases.push(manifest_case("empty file", String::new(), &["base.toml"]));
    cases.push(manifest_case(
        "binary garbage",
        "\u{0}\u{1}\u{2}\u{ff}".into(),
        &["base.toml"],
    ));
    cases.push(manifest_case(
        "5 MB of comments",
        "#".repeat(5 << 20),
        &["base.toml"],
    ));
    // Command-line arguments.
    for (name, args, expect) in [
        ("threads 0", vec!["--threads", "0"], "--threads"),
        ("threads 100000", vec!["--threads", "100000"], "--threads"),
        ("threads -1", vec!["--threads=-1"], "--threads"),
        (
            "method filter nomatch",
            vec!["--method", "nomatch"],
            "--method",
        ),
        ("method filter case", vec!["--method", "Ssi"], "--method"),
        ("unknown profile", vec!["--profile", "full"], "profile"),
        ("seed not a number", vec!["--seed", "x"], "--seed"),
        ("seed negative", vec!["--seed=-3"], "--seed"),
    ] {
        let mut a = run_args();
        // A later --profile overrides the earlier one.
        a.extend(args.iter().map(|s| s.to_string()));
        cases.push(Case {
            name: name.into(),
            manifest: Some(BASE.into()),
            args: a,
            expect: vec![expect.into()],
        });
    }
    for (name, args, expect) in [
        (
            "attack client 0",
            vec!["attack", "m/base.toml", "--client", "0"],
            "--client",
        ),
        (
            "attack client 9",
            vec!["attack", "m/base.toml", "--client", "9"],
            "client",
        ),
        (
            "attack max-rounds 0",
            vec!["attack", "m/base.toml", "--max-rounds", "0"],
            "--max-rounds",
        ),
        (
            "attack target-err -1",
            vec!["attack", "m/base.toml", "--target-err=-1"],
            "--target-err",
        ),
        (
            "attack target-err nan",
            vec!["attack", "m/base.toml", "--target-err", "NaN"],
            "--target-err",
        ),
        ("missing manifest", vec!["run", "m/none.toml"], "none.toml"),
        ("folder as manifest", vec!["run", "m"], "m"),
        (
            "render missing folder",
            vec!["render", "res/faps/base/quick"],
            "res/faps/base/quick",
        ),
        ("render folder without run.json", vec!["render", "m"], "m"),
        (
            "check missing folder",
            vec!["check", "res/nothing"],
            "res/nothing",
        ),
        (
            "check folder without run.json",
            vec!["check", "m"],
            "run.json",
        ),
        (
            "data fetch unknown",
            vec!["data", "fetch", "nosuch"],
            "nosuch",
        ),
        (
            "data verify unknown",
            vec!["data", "verify", "nosuch"],
            "nosuch",
        ),
        ("no subcommand", vec![], "Usage"),
        ("unknown subcommand", vec!["explode"], "explode"),
        ("run without manifest", vec!["run"], "MANIFESTS"),
    ] {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if matches!(a.first().map(String::as_str), Some("run" | "attack")) && a.len() > 1 {
            a.extend(
                ["--profile", "quick", "--results", "res", "--cache", "cache"].map(String::from),
            );
        }
        cases.push(Case {
            name: name.into(),
            manifest: Some(BASE.into()),
            args: a,
            expect: vec![expect.into()],
        });
    }
    cases
}

/// Run one case in a fresh folder and check the four properties: what went wrong, if anything.
fn check_case(case: &Case) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("m")).unwrap();
    if let Some(text) = &case.manifest {
        std::fs::write(d.join("m/base.toml"), text).unwrap();
    }
    let before = files_under(d);
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let out = dpca(d, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = format!("{stderr}{stdout}");
    let name = &case.name;
    if said.contains("panicked") || out.status.code() == Some(101) {
        return Some(format!("{name}: panic\n{said}"));
    }
    if out.status.code().is_none_or(|c| c == 0) {
        return Some(format!(
            "{name}: exit {:?}, expected non-zero\n{said}",
            out.status.code()
        ));
    }
    if let Some(e) = case.expect.iter().find(|e| !said.contains(e.as_str())) {
        return Some(format!("{name}: message does not name {e:?}:\n{said}"));
    }
    // Nothing outside --results and the cache; nothing half-written inside.
    for f in files_under(d) {
        let inside = f.starts_with("res") || f.starts_with("cache");
        if !inside && !before.contains(&f) {
            return Some(format!("{name}: wrote {} outside --results", f.display()));
        }
        if f.to_string_lossy().ends_with(".tmp") {
            return Some(format!("{name}: left a temporary file {}", f.display()));
        }
    }
    None
}

#[test]
fn the_corpus_fails_loudly_and_cleanly() {
    let cases = corpus();
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    // Parallel in a few threads: each case is its own process and folder.
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| s.spawn(move || chunk.iter().filter_map(check_case).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("base.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = dpca(d, &["run", "base.toml", "--results", "res"]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("base.toml") && err.contains("not a regular file"),
        "{err}"
    );
}

/// Write the base manifest and run it at the quick profile into `res`.
pub(super) fn run_base(d: &Path) {
    write_base(d);
    let args = run_args();
    let out = dpca(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_base(d: &Path) {
    std::fs::create_dir_all(d.join("m")).unwrap();
    std::fs::write(d.join("m/base.toml"), BASE).unwrap();
}

fn without_time(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let t = header.iter().position(|h| *h == "time_s").unwrap();
    text.lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            [&cells[..t], &cells[t + 1..]].concat().join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn two_runs_on_one_folder_do_not_corrupt_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_base(d);
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(run_args())
            .args(["--force", "--threads", "1"])
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let res = d.join("res/faps/base/quick");
    let out = dpca(d, &["check", res.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same numbers as a run alone.
    let alone = dpca(
        d,
        &[
            "run",
            "m/base.toml",
            "--profile",
            "quick",
            "--results",
            "solo",
        ],
    );
    assert!(alone.status.success());
    assert_eq!(
        without_time(&res.join("trace.csv")),
        without_time(&d.join("solo/faps/base/quick/trace.csv"))
    );
}

#[test]
fn concurrent_renders_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_base(d);
    let children: Vec<_> = (0..12)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_dpca"))
                .args(["render", "res/faps/base/quick"])
                .current_dir(d)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(dpca(d, &["check", "res/faps/base/quick"]).status.success());
}

#[cfg(unix)]
#[test]
fn a_report_killed_mid_write_is_detected_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_base(d);
    let folder = "res/faps/base/quick";
    // Kill at moments spread over one render's duration (process start included).
    let t0 = std::time::Instant::now();
    assert!(dpca(d, &["render", folder]).status.success());
    let whole = t0.elapsed().as_millis() as u64;
    let mut incomplete = 0;
    for delay_ms in (0..12).map(|k| whole * k / 12) {
        // Make the next render change the files, so a half-written set cannot pass as old.
        let text = std::fs::read_to_string(d.join("m/base.toml")).unwrap();
        std::fs::write(
            d.join("m/base.toml"),
            text.replace("hardening base", &format!("hardening {delay_ms}")),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(["render", folder])
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let out = dpca(d, &["check", folder]);
        if !out.status.success() {
            incomplete += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("incomplete"), "{err}");
        }
        // Only hidden temporary files may be left behind; every visible name is a finished file.
        for f in files_under(&d.join(folder)) {
            let s = f.to_string_lossy();
            assert!(!s.ends_with(".tmp") || s.starts_with('.'), "{s}");
        }
        // A render repairs the set, and removes what the killed one left.
        assert!(dpca(d, &["render", folder]).status.success());
        assert!(dpca(d, &["check", folder]).status.success());
        let left: Vec<_> = files_under(&d.join(folder))
            .into_iter()
            .filter(|f| f.to_string_lossy().contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
    eprintln!(
        "{incomplete} of 12 kills over a {whole} ms render left an incomplete set, each detected"
    );
}

#[test]
fn a_report_write_that_fails_midway_leaves_a_set_check_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_base(d);
    let folder = d.join("res/faps/base/quick");
    assert!(dpca(d, &["check", "res/faps/base/quick"]).status.success());
    // report.md cannot be replaced (a folder now stands in its way): the render fails after the
    // CSVs and figures, before run.json.
    std::fs::remove_file(folder.join("report.md")).unwrap();
    std::fs::create_dir(folder.join("report.md")).unwrap();
    std::fs::write(folder.join("report.md/x"), "x").unwrap();
    let out = dpca(d, &["render", "res/faps/base/quick"]);
    assert!(!out.status.success());
    let out = dpca(d, &["check", "res/faps/base/quick"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("incomplete") && err.contains("report.md"),
        "{err}"
    );
    // An edited CSV is caught too.
    std::fs::remove_dir_all(folder.join("report.md")).unwrap();
    assert!(dpca(d, &["render", "res/faps/base/quick"]).status.success());
    let summary = folder.join("summary.csv");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(&summary, text.replacen(",30,", ",29,", 1) + " ").unwrap();
    let out = dpca(d, &["check", "res/faps/base/quick"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("summary.csv"),
        "{err}"
    );
}

#[test]
fn an_edited_stored_run_is_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_base(d);
    let args = run_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let runs = d.join("res/faps/base/quick/runs");
    let stored = files_under(&runs)
        .into_iter()
        .find(|f| f.to_string_lossy().contains("SSI"))
        .unwrap();
    let path = runs.join(&stored);
    let text = std::fs::read_to_string(&path).unwrap();
    // Change a stored value: the number of rounds.
    let edited = text.replacen("\"rounds\":", "\"rounds\":1", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    let out = dpca(d, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("checksum mismatch") && err.contains("SSI"),
        "{err}"
    );
    // Stored again, whole: the next run trusts it.
    let out = dpca(d, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("checksum"), "{err}");
}

#[test]
fn every_committed_results_folder_is_complete() {
    // results/ never mixes formats: every folder lists its report set in run.json, unchanged.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folders: Vec<PathBuf> = files_under(&root.join("results"))
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "run.json"))
        .map(|f| root.join("results").join(f.parent().unwrap()))
        .collect();
    assert!(!folders.is_empty());
    let args: Vec<&str> = std::iter::once("check")
        .chain(folders.iter().map(|f| f.to_str().unwrap()))
        .collect();
    let out = dpca(root, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
