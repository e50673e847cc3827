//! End to end through the `dpca` binary: outputs, determinism across thread counts, resume,
//! and clear errors with exit code 2 on bad manifests.

use std::path::Path;
use std::process::Command;

const MANIFEST: &str = r#"
id = "tiny"
paper = "faps"
paper_file = "000_87ac87c3d542a13b.txt"
title = "tiny test"
reproduces = "nothing"
seed = 5

[data]
generator = "svd"
spectrum = "geometric"
n = 30
m = 600
xi = 1.2

[partition]
scheme = "uneven"
clients = 3

[problem]
p = 3

[stop]
max_rounds = 200
objective_tol = 1e-10

[[methods]]
name = "ssi"
label = "SSI"

[[methods]]
name = "faps"
label = "FAPS"

[[methods]]
name = "localpower"
label = "LocalPower"

[[plots]]
file = "convergence_kkt"
x = "rounds"
y = "kkt"

[[paper_results]]
method = "SSI"
rounds = 50
sv_err = 1e-7

[profiles.quick]
"#;

/// `dpca run <manifest> --profile quick --threads <threads> --results <results> --cache cache`.
fn run_quick(cwd: &Path, manifest: &str, threads: &str, results: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args([
            "run",
            manifest,
            "--profile",
            "quick",
            "--threads",
            threads,
            "--results",
            results,
            "--cache",
            "cache",
        ])
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// The CSV without its time column.
fn without_time(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let t = header.iter().position(|h| *h == "time_s").unwrap();
    text.lines()
        .map(|l| {
            l.split(',')
                .enumerate()
                .filter(|(i, _)| *i != t)
                .map(|(_, c)| c)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn run_writes_everything_and_is_deterministic_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.toml"), MANIFEST).unwrap();
    for (threads, out) in [("1", "r1"), ("2", "r2")] {
        let o = run_quick(d, "tiny.toml", threads, out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let r1 = d.join("r1/faps/tiny/quick");
    let r2 = d.join("r2/faps/tiny/quick");
    for f in [
        "trace.csv",
        "summary.csv",
        "report.md",
        "run.json",
        "convergence_kkt.svg",
        "convergence_kkt.png",
    ] {
        assert!(r1.join(f).exists(), "missing {f}");
    }
    assert_eq!(
        without_time(&r1.join("trace.csv")),
        without_time(&r2.join("trace.csv"))
    );
    assert_eq!(
        without_time(&r1.join("summary.csv")),
        without_time(&r2.join("summary.csv"))
    );

    let header = std::fs::read_to_string(r1.join("summary.csv")).unwrap();
    assert!(header.starts_with(
        "experiment,profile,method,params,p_align,p_beta0,p_decay,p_delta,p_eps_x,p_halve_every,\
         p_inner,p_inner_steps,p_max_inner,p_mu,p_period,p_power_iters,p_q0,p_theta,seed,rounds,converged,time_s,bytes_up,bytes_down,vectors,objective,kkt,sv_err,subspace_dist,paper_rounds,paper_sv_err,stop_reason,status,point,run_id"
    ));
    let trace = std::fs::read_to_string(r1.join("trace.csv")).unwrap();
    assert!(trace.starts_with(
        "experiment,profile,method,params,seed,round,inner_iters,time_s,bytes_up,bytes_down,vectors,objective,kkt,sv_err,subspace_dist,point,run_id"
    ));
    let report = std::fs::read_to_string(r1.join("report.md")).unwrap();
    assert!(report.contains("| 50 |"), "paper's rounds beside ours");

    let peak = |dir: &Path| -> f64 {
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
        json["peak_rss_mib"].as_f64().expect("peak memory recorded")
    };
    let computed_peak = peak(&r1);
    // What decides the last bits: the BLAS kernels in use and the CPU's vector extensions.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r1.join("run.json")).unwrap()).unwrap();
    let core = json["blas_core"].as_str().expect("BLAS core type recorded");
    assert!(!core.is_empty());
    #[cfg(target_arch = "x86_64")]
    for (ext, has) in [
        ("avx2", std::is_x86_feature_detected!("avx2")),
        ("avx512f", std::is_x86_feature_detected!("avx512f")),
        ("fma", std::is_x86_feature_detected!("fma")),
    ] {
        assert_eq!(json["cpu_features"][ext].as_bool(), Some(has), "{ext}");
    }

    // Resume: a second run loads the stored runs (same CSV) without recomputing.
    let before = std::fs::metadata(r1.join("runs"))
        .unwrap()
        .modified()
        .unwrap();
    let o = run_quick(d, "tiny.toml", "1", "r1");
    assert!(o.status.success());
    assert_eq!(
        std::fs::metadata(r1.join("runs"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    assert_eq!(
        without_time(&r1.join("trace.csv")),
        without_time(&r2.join("trace.csv"))
    );
    // The re-rendered provenance keeps the computing process's memory, not the reloader's own.
    assert_eq!(peak(&r1), computed_peak);

    // Re-running one method (--method FAPS --force) recomputes it alone; the outputs still hold
    // every stored run, SSI's included.
    let o = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(["run", "tiny.toml", "--profile", "quick", "--results", "r1"])
        .args(["--cache", "cache", "--method", "FAPS", "--force"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        without_time(&r1.join("summary.csv")),
        without_time(&r2.join("summary.csv"))
    );
}

/// summary.csv has a `p_<name>` column per parameter of any method, defaults included, sorted,
/// after `params`: empty where a method has no such parameter. trace.csv has none (run_id joins
/// them). A render of the folder writes the same bytes.
#[test]
fn summary_has_a_column_per_resolved_parameter_and_renders_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let manifest = MANIFEST.replace(
        "label = \"FAPS\"",
        "label = \"FAPS\"\nparams = { inner_steps = 3 }",
    );
    std::fs::write(d.join("tiny.toml"), manifest).unwrap();
    let o = run_quick(d, "tiny.toml", "1", "res");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folder = d.join("res/faps/tiny/quick");

    let mut r = csv::Reader::from_path(folder.join("summary.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let after_params: Vec<&str> = head
        .iter()
        .skip_while(|h| *h != "params")
        .skip(1)
        .take_while(|h| h.starts_with("p_"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        after_params,
        [
            "p_align",
            "p_beta0",
            "p_decay",
            "p_delta",
            "p_eps_x",
            "p_halve_every",
            "p_inner",
            "p_inner_steps",
            "p_max_inner",
            "p_mu",
            "p_period",
            "p_power_iters",
            "p_q0",
            "p_theta"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let cell = |method: &str, column: &str| {
        let (m, c) = (
            head.iter().position(|h| h == "method").unwrap(),
            head.iter().position(|h| h == column).unwrap(),
        );
        let row = rows.iter().find(|r| &r[m] == method).unwrap();
        row[c].to_string()
    };
    for (method, column, want) in [
        ("FAPS", "p_inner_steps", "3"),
        ("FAPS", "p_beta0", "0.15"),
        ("FAPS", "p_inner", "fixed"),
        ("FAPS", "p_q0", ""),
        ("LocalPower", "p_q0", "8"),
        ("LocalPower", "p_decay", "true"),
        ("LocalPower", "p_align", "procrustes"),
        ("LocalPower", "p_beta0", ""),
    ] {
        assert_eq!(cell(method, column), want, "{method} {column}");
    }
    for column in &after_params {
        assert_eq!(cell("SSI", column), "", "SSI has no parameters");
    }
    let trace = std::fs::read_to_string(folder.join("trace.csv")).unwrap();
    assert!(!trace.lines().next().unwrap().contains(",p_"));

    // A render writes the same bytes, also from a summary.csv written before the `p_` columns.
    let files = ["summary.csv", "trace.csv", "report.md"];
    let read = || files.map(|f| std::fs::read(folder.join(f)).unwrap());
    let before = read();
    let render = || {
        let o = Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(["render", folder.to_str().unwrap()])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    render();
    assert!(read() == before, "a render changed {files:?}");
    let keep: Vec<usize> = (0..head.len())
        .filter(|&i| !head[i].starts_with("p_"))
        .collect();
    let mut w = csv::Writer::from_path(folder.join("summary.csv")).unwrap();
    for row in std::iter::once(&csv::StringRecord::from(head.clone())).chain(&rows) {
        w.write_record(keep.iter().map(|&i| &row[i])).unwrap();
    }
    w.flush().unwrap();
    render();
    assert!(
        read() == before,
        "a render of the earlier format changed {files:?}"
    );
}

/// DPCA_PRODUCT_KERNEL picks the code of the dense products A(AᵀX) and AᵀX, and run.json
/// records which ran; the own kernels and BLAS agree on the rounds and to 1e-9 on every
/// metric (they sum in other orders); the AVX2 kernels give the AVX-512 kernels' CSVs bit for
/// bit (apart from times) where the CPU runs both; an unknown value exits 2 naming the variable.
#[test]
fn product_kernel_is_chosen_by_env_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.toml"), MANIFEST).unwrap();
    let run = |kernel: &str, out: &str| {
        Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(["run", "tiny.toml", "--profile", "quick", "--results", out])
            .args(["--cache", "cache"])
            .env("DPCA_PRODUCT_KERNEL", kernel)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let run_json = |out: &str| -> serde_json::Value {
        let path = d.join(out).join("faps/tiny/quick/run.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    for (kernel, out) in [("blas", "rb"), ("", "rd")] {
        let o = run(kernel, out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(run_json("rb")["product_kernel"], "blas");
    // The default follows the CPU features the same run.json records.
    let json = run_json("rd");
    let cpu = &json["cpu_features"];
    let (avx512, avx2) = (cpu["avx512f"] == true, cpu["avx2"] == true);
    let default = match (cpu["fma"] == true, avx512, avx2) {
        (true, true, _) => "avx512",
        (true, false, true) => "avx2",
        _ => "blas",
    };
    assert_eq!(json["product_kernel"], default);
    if default == "avx512" {
        let o = run("avx2", "r2");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(run_json("r2")["product_kernel"], "avx2");
        for file in ["summary.csv", "trace.csv"] {
            let at = |out: &str| d.join(out).join("faps/tiny/quick").join(file);
            assert_eq!(without_time(&at("rd")), without_time(&at("r2")), "{file}");
        }
    }
    let rows = |out: &str| -> Vec<Vec<String>> {
        let text =
            std::fs::read_to_string(d.join(out).join("faps/tiny/quick/summary.csv")).unwrap();
        text.lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    };
    let (b, x) = (rows("rb"), rows("rd"));
    let col = |name: &str| b[0].iter().position(|h| h == name).unwrap();
    assert_eq!(b.len(), x.len());
    for (rb, rx) in b.iter().zip(&x).skip(1) {
        assert_eq!(
            rb[col("rounds")],
            rx[col("rounds")],
            "{}",
            rb[col("method")]
        );
        for metric in ["objective", "kkt", "sv_err", "subspace_dist"] {
            let (u, v): (f64, f64) = (
                rb[col(metric)].parse().unwrap(),
                rx[col(metric)].parse().unwrap(),
            );
            assert!(
                (u - v).abs() <= 1e-9 * u.abs().max(1e-3),
                "{metric}: {u} vs {v}"
            );
        }
    }
    // The report names the kernel that computed the numbers, also when re-rendered by a
    // process whose own default differs (avx512 on an AVX-512 CPU).
    let report = |out: &str| std::fs::read_to_string(d.join(out).join("faps/tiny/quick/report.md"));
    assert!(report("rb")
        .unwrap()
        .contains("dense products A_i(A_iᵀX): BLAS"));
    let o = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(["render", "rb/faps/tiny/quick"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(report("rb")
        .unwrap()
        .contains("dense products A_i(A_iᵀX): BLAS"));
    assert_eq!(run_json("rb")["product_kernel"], "blas");
    let o = run("fast", "rf");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("DPCA_PRODUCT_KERNEL") && err.contains("avx512, avx2 or blas"),
        "{err}"
    );
    assert!(!d.join("rf").exists(), "nothing written on bad input");
}

/// dpca pins OpenBLAS's kernels itself (it starts again with OPENBLAS_CORETYPE=Haswell), so
/// run.json's blas_core is Haswell on any CPU with AVX2 and FMA; the user's own core type wins;
/// DPCA_BLAS_PIN=off leaves the choice to OpenBLAS; a bad value exits 2 naming the variable.
#[cfg(target_arch = "x86_64")]
#[test]
fn blas_kernels_are_pinned_unless_the_user_chooses() {
    if !cfg!(feature = "openblas") || cfg!(feature = "mkl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.toml"), MANIFEST).unwrap();
    let run = |env: &[(&str, &str)], out: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dpca"));
        cmd.args(["run", "tiny.toml", "--profile", "quick", "--results", out])
            .args(["--cache", "cache"])
            .env_remove("OPENBLAS_CORETYPE")
            .env_remove("DPCA_BLAS_PIN")
            .current_dir(d);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let core = |out: &str| -> serde_json::Value {
        let path = d.join(out).join("faps/tiny/quick/run.json");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        json["blas_core"].clone()
    };
    let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    let o = run(&[], "pinned");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    if avx2 {
        assert_eq!(core("pinned"), "Haswell");
    }
    let o = run(&[("OPENBLAS_CORETYPE", "Zen")], "zen");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    if avx2 {
        assert_eq!(core("zen"), "Zen");
    }
    let o = run(&[("DPCA_BLAS_PIN", "off")], "off");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(core("off").is_string());
    let o = run(&[("DPCA_BLAS_PIN", "always")], "bad");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("DPCA_BLAS_PIN") && err.contains("\"always\""),
        "{err}"
    );
    assert!(!d.join("bad").exists(), "nothing written on bad input");
}

/// A closed stdout (`dpca list | head -1`) ends the command quietly: no panic message.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(["list", "--experiments"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before dpca has started (it re-executes itself first): its first line fails.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(
        !err.contains("panicked") && !err.contains("failed printing"),
        "{err}"
    );
}

#[test]
fn bad_manifest_exits_2_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("p = 3", "p = 31", "problem.p"),
        ("clients = 3", "clients = 0", "partition.clients"),
        ("xi = 1.2", "xi = 1.2\nbogus = 1", "bogus"),
        ("n = 30", "n = \"thirty\"", "data.n"),
        (
            "name = \"faps\"",
            "name = \"faps\"\nparams = { inner_stepz = 3 }",
            "inner_stepz",
        ),
    ];
    for (from, to, key) in cases {
        let text = MANIFEST.replacen(from, to, 1);
        // The manifest id must match its file name, so the bad copy keeps the name in its own folder.
        std::fs::create_dir_all(d.join("bad")).unwrap();
        std::fs::write(d.join("bad/tiny.toml"), &text).unwrap();
        let o = run_quick(d, "bad/tiny.toml", "2", "r");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "case {to}: {err}");
        let line = text
            .lines()
            .position(|l| l.contains(to.lines().last().unwrap()))
            .unwrap()
            + 1;
        assert!(err.contains("bad/tiny.toml"), "case {to}: {err}");
        assert!(err.contains(key), "case {to}: {err}");
        assert!(
            err.contains(&format!(":{line}")),
            "case {to}: want line {line}: {err}"
        );
    }
}

/// Two [[methods]] entries of one method that differ only in fixed parameters are stored apart
/// (named by label), and a stored run is reused only under its own fingerprint.
#[test]
fn run_store_keeps_entries_of_one_method_apart() {
    use dpca_bench::run::{RunKey, RunRecord, RunStore, TraceRow};
    let dir = tempfile::tempdir().unwrap();
    let store = RunStore::new(dir.path());
    let key = |label: &str, fp: &str| RunKey {
        point: String::new(),
        method: "localpower".into(),
        label: label.into(),
        params: "halve_every=1".into(),
        seed: 4,
        fingerprint: fp.into(),
    };
    let record = |key: RunKey, rounds: u64| RunRecord {
        key,
        rounds,
        converged: true,
        stop_reason: "objective_change".into(),
        trace: vec![TraceRow {
            round: 0,
            inner_iters: 0.0,
            time_s: 0.0,
            bytes_up: 0,
            bytes_down: 0,
            vectors: 0.0,
            metrics: [("kkt".to_string(), 1.0)].into(),
            leak_err: None,
        }],
        bytes_up_per_client: vec![],
        resolved: serde_json::Value::Null,
        spectra: Default::default(),
        threads: 1,
        peak_rss_mib: None,
        chosen: Default::default(),
        error: None,
    };
    let (plain, sign) = (key("LocalPower", "aa"), key("LocalPower sign", "bb"));
    store.save(&record(plain.clone(), 279)).unwrap();
    store.save(&record(sign.clone(), 283)).unwrap();
    assert_eq!(store.load(&plain).unwrap().rounds, 279);
    assert_eq!(store.load(&sign).unwrap().rounds, 283);
    assert!(
        store.load(&key("LocalPower", "dd")).is_none(),
        "another fingerprint is not reused"
    );
}

/// A sweep's paper numbers without a point are averages: summary.csv and the per-point rows leave
/// them out and the averages table carries them; a number given for one point sits on its row.
#[test]
fn sweep_paper_numbers_sit_beside_averages_or_their_point() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let manifest = MANIFEST
        .replace("[profiles.quick]", "[sweep]\n\"data.n\" = [20, 30]\n\n[profiles.quick]")
        .replace(
            "[[paper_results]]",
            "[[paper_results]]\nmethod = \"SSI\"\npoint = \"n=20\"\nrounds = 77\n\n[[paper_results]]",
        )
        .replace("sv_err = 1e-7", "sv_err = 1.25e-7");
    std::fs::write(d.join("tiny.toml"), manifest).unwrap();
    let o = run_quick(d, "tiny.toml", "2", "r");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.join("r/faps/tiny/quick");

    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<Vec<&str>> = summary.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    let (method, point, rounds, sv) = (
        col("method"),
        col("point"),
        col("paper_rounds"),
        col("paper_sv_err"),
    );
    for r in rows.iter().skip(1).filter(|r| r[method] == "SSI") {
        let want = if r[point] == "n=20" { "77" } else { "" };
        assert_eq!(r[rounds], want, "paper rounds at {}", r[point]);
        assert_eq!(r[sv], "", "an average is not a point's number");
    }

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| n=20 | SSI | 77 |"), "{report}");
    assert!(report.contains("| n=30 | SSI | — |"), "{report}");
    assert!(report.contains("averages over its points"));
    let avg = report
        .lines()
        .find(|l| l.starts_with("| SSI |"))
        .expect("averages row for SSI");
    assert!(avg.contains("1.25e-7"), "{avg}");
}

/// CEDRE's searched η, RGD's η and DSI's shift land in run.json and report.md, and a re-render
/// from the CSVs and run.json keeps them; with repeats the report shows one mean row per
/// configuration.
#[test]
fn values_a_method_chose_are_recorded_and_survive_a_render() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = r#"
id = "chosen"
paper = "cedre"
paper_file = "001_2ae475dc7acdb24e.txt"
title = "chosen values"
reproduces = "nothing"
seed = 9
repeats = 2

[data]
generator = "eigengap"
n = 40
m = 2000
delta = 0.1

[partition]
scheme = "even"
clients = 4

[problem]
kind = "eigvec"
p = 1

[stop]
max_rounds = 10

[[methods]]
name = "cedre"
label = "CEDRE"

[[methods]]
name = "cedre"
label = "CEDRE fixed"
params = { eta = 0.01 }

[[methods]]
name = "rgd"
label = "RGD"

[[methods]]
name = "dsi"
label = "DSI"

[profiles.quick]
"#;
    std::fs::write(dir.path().join("chosen.toml"), manifest).unwrap();
    let out = run_quick(dir.path(), "chosen.toml", "1", "res");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exp = dir.path().join("res/cedre/chosen/quick");
    let check = |when: &str| {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(exp.join("run.json")).unwrap()).unwrap();
        let runs = json["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 8, "{when}");
        for r in runs {
            let chosen = &r["chosen"];
            match r["label"].as_str().unwrap() {
                // The search picks one of the default grid's values (units of 1/λ̂, λ̂ = 1).
                "CEDRE" => {
                    let eta = chosen["eta"].as_f64().unwrap();
                    assert!(
                        [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5].contains(&eta),
                        "{when}: {eta}"
                    );
                }
                // A fixed η is a parameter, not a choice.
                "CEDRE fixed" => assert!(chosen.is_null(), "{when}: {chosen}"),
                "RGD" => assert!(chosen["eta"].as_f64().unwrap() > 0.0, "{when}"),
                "DSI" => {
                    let (m, s) = (chosen["margin"].as_f64(), chosen["shift"].as_f64());
                    assert!(
                        m.unwrap() > 0.0 && s.unwrap() > m.unwrap(),
                        "{when}: {chosen}"
                    );
                }
                other => panic!("{when}: unexpected label {other}"),
            }
        }
        let report = std::fs::read_to_string(exp.join("report.md")).unwrap();
        assert!(report.contains("### Chosen while running"), "{when}");
        assert!(report.contains("CEDRE (mean of 2)"), "{when}:\n{report}");
        assert!(
            report.contains("shift: mean") || report.contains("shift = "),
            "{when}"
        );
    };
    check("after the run");
    let render = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(["render", exp.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    check("after a render");
}

#[cfg(not(feature = "mpi"))]
#[test]
fn backend_mpi_without_the_feature_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), MANIFEST).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(["run", "tiny.toml", "--backend", "mpi", "--results", "r"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--features mpi") && err.contains("mpirun"),
        "{err}"
    );
    assert!(!dir.path().join("r").exists(), "nothing written");
}

/// A run at the cap is `capped`, its rounds and their ratio to the paper's printed as lower
/// bounds; one that rule (27) stops with its KKT above the target is `stalled`, flagged in the
/// report; and a render from the CSVs, with the status column dropped and every run marked
/// converged (as folders written before it), judges them the same.
#[test]
fn capped_and_stalled_runs_are_told_apart_and_rendered_as_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, stop, status) in [
        ("capped", "max_rounds = 4", "capped"),
        (
            "stalled",
            "max_rounds = 200\nobjective_tol = 0.5\ntarget = { metric = \"kkt\", value = 1e-30 }",
            "stalled",
        ),
    ] {
        let manifest = MANIFEST
            .replace("max_rounds = 200\nobjective_tol = 1e-10", stop)
            .replace("id = \"tiny\"", &format!("id = \"{name}\""));
        let file = format!("{name}.toml");
        std::fs::write(d.join(&file), manifest).unwrap();
        let o = run_quick(d, &file, "1", "r");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let folder = d.join(format!("r/faps/{name}/quick"));
        let files = ["summary.csv", "report.md"];
        let read = || files.map(|f| std::fs::read_to_string(folder.join(f)).unwrap());
        let before = read();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(folder.join("summary.csv"))
            .unwrap()
            .records()
            .map(Result::unwrap)
            .collect();
        let head = csv::Reader::from_path(folder.join("summary.csv"))
            .unwrap()
            .headers()
            .unwrap()
            .clone();
        let col = |c: &str| head.iter().position(|h| h == c).unwrap();
        assert_eq!(rows.len(), 3);
        for r in &rows {
            assert_eq!(&r[col("status")], status, "{r:?}");
            assert_eq!(&r[col("converged")], "false", "{r:?}");
        }
        let report = &before[1];
        if status == "capped" {
            // 4 rounds against the paper's 50: at least 4, a ratio of at least 0.08.
            assert!(report.contains("| SSI | 50 | ≥ 4 | ≥ 8.0e-2 |"), "{report}");
            assert!(report.contains("capped (max_rounds)"), "{report}");
        } else {
            assert!(report.contains("**3 run(s) stalled**"), "{report}");
            assert!(report.contains("stalled (objective_change)"), "{report}");
        }
        // As a folder written before the status column: every run "converged".
        let keep: Vec<usize> = (0..head.len()).filter(|&i| i != col("status")).collect();
        let mut w = csv::Writer::from_path(folder.join("summary.csv")).unwrap();
        w.write_record(keep.iter().map(|&i| &head[i])).unwrap();
        for r in &rows {
            w.write_record(keep.iter().map(
                |&i| {
                    if i == col("converged") {
                        "true"
                    } else {
                        &r[i]
                    }
                },
            ))
            .unwrap();
        }
        w.flush().unwrap();
        drop(w);
        let o = Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(["render", folder.to_str().unwrap()])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(read() == before, "{name}: a render judged otherwise");
    }
}
