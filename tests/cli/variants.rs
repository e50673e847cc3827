//! Variants without editing a file (`dpca run M --set KEY=VALUE`), the results folder whatever
//! the manifest's path spelling, and a sweep over whole sections (the partition scheme with its
//! own parameters).

use std::path::Path;
use std::process::{Command, Output};

/// 60 samples × 6 features with a decaying spectrum, and a label (3 classes of 20) last.
fn csv_with_labels() -> String {
    (0..60)
        .map(|i| {
            let row: Vec<String> = (0..6)
                .map(|j| {
                    let k = (i * 37 + j * 101 + i * j * 7) % 129;
                    format!("{:?}", (k as f64 - 64.0) / 64.0 * (6 - j) as f64)
                })
                .collect();
            format!("{},{}\n", row.join(","), i % 3)
        })
        .collect()
}

fn manifest(id: &str, extra_methods: &str, partition: &str, sweep: &str) -> String {
    format!(
        r#"id = "{id}"
paper = "mine"
seed = 3

[data]
source = "x.csv"
label_column = 7

[partition]
{partition}

[problem]
p = 2

[stop]
max_rounds = 300
objective_tol = 1e-12

[[methods]]
name = "ssi"

[[methods]]
name = "faps"
{extra_methods}
{sweep}
[profiles.quick]
"#
    )
}

/// exp/v.toml over exp/x.csv, split evenly over 3 clients.
fn even_manifest(root: &Path) {
    write(&root.join("exp/x.csv"), &csv_with_labels());
    write(
        &root.join("exp/v.toml"),
        &manifest("v", "", "scheme = \"even\"\nclients = 3", ""),
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `dpca ARGS` in `cwd`; a `run` on one thread with the cache in `cwd`.
fn dpca(cwd: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpca"));
    c.args(args).current_dir(cwd);
    if args.first() == Some(&"run") {
        c.args(["--threads", "1", "--cache"]).arg(cwd.join("cache"));
    }
    c.output().unwrap()
}

fn run(cwd: &Path, manifest: &str, sets: &[&str]) -> Output {
    let mut args = vec![
        "run",
        manifest,
        "--profile",
        "quick",
        "--results",
        "results",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    dpca(cwd, &args)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The error line of a run that must fail with exit status 2 (a manifest error).
fn fails(out: &Output) -> String {
    let e = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// summary.csv's rows as (header → cell) maps.
fn summary(dir: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let head = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .zip(rec.iter())
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

fn folders(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// `--set` changes a method's parameter (a list sweeps, as in the file) and a manifest key; the
/// variant lands beside the manifest's own results, which it leaves alone, and run.json,
/// report.md and `dpca render` carry the list.
#[test]
fn set_runs_a_variant_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    even_manifest(root);
    ok(&run(root, "exp/v.toml", &[]));
    let sets = ["faps.inner_steps=[1, 3]", "stop.max_rounds=40"];
    ok(&run(root, "exp/v.toml", &sets));

    let exp = root.join("results/mine/v");
    let names = folders(&exp);
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "quick");
    let variant = &names[1];
    assert!(
        variant.starts_with("quick+set-") && variant.len() == "quick+set-".len() + 8,
        "{variant}"
    );
    let base = summary(&exp.join("quick"));
    let var = summary(&exp.join(variant));
    assert_eq!(base.len(), 2, "SSI and FAPS");
    let faps: Vec<_> = var.iter().filter(|r| r["method"] == "faps").collect();
    let steps: Vec<&str> = faps.iter().map(|r| r["p_inner_steps"].as_str()).collect();
    assert_eq!(steps, ["1", "3"], "the list sweeps");
    assert!(var
        .iter()
        .all(|r| r["rounds"].parse::<usize>().unwrap() <= 40));
    assert!(base
        .iter()
        .any(|r| r["rounds"].parse::<usize>().unwrap() > 40));

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exp.join(variant).join("run.json")).unwrap())
            .unwrap();
    assert_eq!(
        json["manifest"]["set"],
        serde_json::json!(["faps.inner_steps=[1, 3]", "stop.max_rounds=40"])
    );
    assert_eq!(json["stop"]["max_rounds"], 40);
    let base_json = std::fs::read_to_string(exp.join("quick/run.json")).unwrap();
    assert!(
        !base_json.contains("\"set\""),
        "the file's own run.json has no list"
    );
    let report = std::fs::read_to_string(exp.join(variant).join("report.md")).unwrap();
    assert!(
        report.contains("manifest + `--set faps.inner_steps=[1, 3]` `--set stop.max_rounds=40`"),
        "{report}"
    );

    // Render reads the list back from run.json: the same runs, not the file's own.
    let before = std::fs::read_to_string(exp.join(variant).join("summary.csv")).unwrap();
    let out = dpca(root, &["render", exp.join(variant).to_str().unwrap()]);
    ok(&out);
    let after = std::fs::read_to_string(exp.join(variant).join("summary.csv")).unwrap();
    assert_eq!(before, after);

    // The same list again: the stored runs are found, nothing new is made.
    ok(&run(root, "exp/v.toml", &sets));
    assert_eq!(folders(&exp).len(), 2);
}

/// Bad `--set` entries are manifest errors (exit status 2) naming the flag, checked as the
/// file's own keys are.
#[test]
fn set_errors_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    even_manifest(root);
    let e = fails(&run(root, "exp/v.toml", &["faps.betta0=0.1"]));
    assert!(
        e.contains("error: --set faps.betta0=0.1: ") && e.contains("beta0"),
        "an unknown parameter names the flag and the valid ones: {e}"
    );
    let e = fails(&run(root, "exp/v.toml", &["faps.beta0=\"high\""]));
    assert!(e.contains("--set faps.beta0=\"high\": "), "{e}");
    let e = fails(&run(root, "exp/v.toml", &["stop.max_roundz=5"]));
    assert!(
        e.contains("--set stop.max_roundz=5: ") && e.contains("max_rounds"),
        "{e}"
    );
    let e = fails(&run(root, "exp/v.toml", &["fapz.beta0=1"]));
    assert!(
        e.contains("--set fapz.beta0=1: ") && e.contains("`ssi`") && e.contains("`faps`"),
        "{e}"
    );
    let e = fails(&run(root, "exp/v.toml", &["partition.scheme=dirichlet"]));
    assert!(
        e.contains("--set partition.scheme=\"dirichlet\": ") && e.contains("alpha"),
        "the key the flag made necessary: {e}"
    );
    let e = fails(&run(root, "exp/v.toml", &["data.n"]));
    assert!(e.contains("KEY=VALUE"), "{e}");
    let e = fails(&run(root, "exp/v.toml", &["data.n=[1,"]));
    assert!(e.contains("not a TOML value"), "{e}");
    let e = fails(&run(root, "exp/v.toml", &["profiles.quick.seed=1"]));
    assert!(e.contains("after the profile"), "{e}");

    // Two entries of one method: name one by its label.
    write(
        &root.join("exp/two.toml"),
        &manifest(
            "two",
            "label = \"FAPS a\"\n\n[[methods]]\nname = \"faps\"\nlabel = \"FAPS b\"\n",
            "scheme = \"even\"\nclients = 3",
            "",
        ),
    );
    let e = fails(&run(root, "exp/two.toml", &["faps.beta0=0.5"]));
    assert!(
        e.contains("names 2 [[methods]] entries")
            && e.contains("`FAPS a`")
            && e.contains("`FAPS b`"),
        "{e}"
    );
    assert!(
        !root.join("results").exists(),
        "no failed run wrote results"
    );
    ok(&run(root, "exp/two.toml", &["\"FAPS b\".beta0=0.5"]));
}

/// The results folder of a manifest without `paper` is named after the folder the file is in,
/// however its path is spelt (relative from two places, with `..`, through a link).
#[test]
fn results_folder_does_not_depend_on_the_path_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("mywork/x.csv"), &csv_with_labels());
    let text = manifest("digits", "", "scheme = \"even\"\nclients = 3", "")
        .replace("paper = \"mine\"\n", "");
    write(&root.join("mywork/digits.toml"), &text);
    std::os::unix::fs::symlink(root.join("mywork/digits.toml"), root.join("link.toml")).unwrap();
    let results = root.join("results");
    let results = results.to_str().unwrap();
    let spellings: [(&Path, &str); 4] = [
        (&root.join("mywork"), "digits.toml"),
        (root, "mywork/digits.toml"),
        (root, "./mywork/../mywork/digits.toml"),
        (root, "link.toml"),
    ];
    for (cwd, path) in spellings {
        let out = dpca(
            cwd,
            &["run", path, "--profile", "quick", "--results", results],
        );
        ok(&out);
        assert_eq!(folders(&root.join("results")), ["mywork"], "{path}");
        assert_eq!(folders(&root.join("results/mywork")), ["digits"], "{path}");
    }
    let runs = root.join("results/mywork/digits/quick/runs");
    assert_eq!(
        folders(&runs).len(),
        2,
        "one stored run per method, made once"
    );
}

/// `[sweep] partition = [tables]` sweeps the scheme with its own parameters: even (which
/// refuses alpha) and Dirichlet (which needs it) in one experiment, labelled by scheme.
#[test]
fn a_sweep_over_partition_schemes_runs() {
    use dpca_bench::data::cache::MatrixCache;
    use dpca_bench::problem::family;
    use dpca_bench::progress::Progress;

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("exp/x.csv"), &csv_with_labels());
    let sweep =
        "[sweep]\npartition = [{ scheme = \"even\" }, { scheme = \"dirichlet\", alpha = 0.1 }]\n";
    write(
        &root.join("exp/v.toml"),
        &manifest("v", "", "clients = 3", sweep),
    );

    let exp = dpca_bench::plan::load(&root.join("exp/v.toml"), "quick").unwrap();
    let labels: Vec<&str> = exp.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["partition=even", "partition=dirichlet(alpha=0.1)"]);
    let cache = MatrixCache::new(&root.join("cache"));
    let sizes: Vec<Vec<usize>> = exp
        .points
        .iter()
        .map(|p| {
            family(exp.kind)
                .build(p, exp.seed, &cache, root, &Progress::hidden())
                .unwrap()
                .sizes()
                .to_vec()
        })
        .collect();
    assert_eq!(sizes[0], [20, 20, 20], "even");
    assert_eq!(sizes[1].iter().sum::<usize>(), 60);
    assert_ne!(
        sizes[1], sizes[0],
        "Dirichlet(0.1) splits unevenly: {sizes:?}"
    );

    ok(&run(root, "exp/v.toml", &[]));
    let rows = summary(&root.join("results/mine/v/quick"));
    let mut points: Vec<&str> = rows.iter().map(|r| r["point"].as_str()).collect();
    points.dedup();
    assert_eq!(points, labels);

    // A table that is not one, or alpha given to the even scheme: errors naming the sweep.
    let bad = "[sweep]\npartition = [{ scheme = \"even\", alpha = 0.1 }]\n";
    write(
        &root.join("exp/bad.toml"),
        &manifest("bad", "", "clients = 3", bad),
    );
    let e = fails(&run(root, "exp/bad.toml", &[]));
    assert!(e.contains("bad.toml:") && e.contains("alpha"), "{e}");
    let bad = "[sweep]\npartition = [\"even\"]\n";
    write(
        &root.join("exp/bad2.toml"),
        &manifest("bad2", "", "clients = 3", bad),
    );
    let e = fails(&run(root, "exp/bad2.toml", &[]));
    assert!(e.contains("takes tables"), "{e}");
    // The same sweep from the command line.
    write(
        &root.join("exp/w.toml"),
        &manifest("w", "", "scheme = \"even\"\nclients = 3", ""),
    );
    ok(&run(
        root,
        "exp/w.toml",
        &["sweep.partition=[{scheme=\"even\"}, {scheme=\"dirichlet\", alpha=0.1}]"],
    ));
}

/// A manifest without `[stop]` gets its family's default: CEDRE, which reports no objective,
/// stops at the eigvec family's sin²θ target, converged, instead of running to the round cap;
/// report.md and run.json say the default applied. Every committed manifest sets its own
/// `[stop]`, so none changed meaning.
#[test]
fn family_default_stop_ends_cedre_and_is_recorded() {
    use dpca_bench::problem::{family, FAMILIES};
    use dpca_bench::spec::Kind;

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = format!(
        "id = \"e\"\npaper = \"mine\"\nseed = 2\n{}[partition]\nscheme = \"even\"\nclients = 4\n\
         [[methods]]\nname = \"cedre\"\n",
        family(Kind::Eigvec).example()
    );
    write(&root.join("exp/e.toml"), &text);
    let exp = dpca_bench::plan::load(&root.join("exp/e.toml"), "default").unwrap();
    assert!(exp.stop_default);
    assert_eq!(exp.stop, family(Kind::Eigvec).default_stop());
    let t = exp
        .stop
        .target
        .as_ref()
        .expect("the eigvec default has a target");
    assert_eq!((t.metric.as_str(), t.value), ("sin2", 1e-20));

    ok(&dpca(root, &["run", "exp/e.toml", "--results", "results"]));
    let out = root.join("results/mine/e/default");
    let rows = summary(&out);
    assert_eq!(rows[0]["status"], "converged", "{:?}", rows[0]);
    assert!(rows[0]["rounds"].parse::<usize>().unwrap() < 1000);
    assert!(rows[0]["sin2"].parse::<f64>().unwrap() <= 1e-20);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("stop: family default (eigvec"), "{report}");
    let json = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(json.contains("\"stop_default\""), "{json}");

    // One default per family, each valid for it (its target a metric of the family).
    for f in FAMILIES {
        let s = f.default_stop();
        assert!(s.max_rounds >= 1000);
        if let Some(t) = &s.target {
            assert!(f.metrics().iter().any(|m| m.name == t.metric), "{t:?}");
        }
        assert!(s.objective_tol.is_some() || s.target.is_some() || s.own_criterion);
    }

    // No committed manifest relies on a default.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("experiments")).unwrap() {
        for m in std::fs::read_dir(entry.unwrap().path()).unwrap() {
            let path = m.unwrap().path();
            if path.extension().is_some_and(|x| x == "toml") {
                for profile in dpca_bench::spec::profile_names(&path).unwrap() {
                    let parsed = dpca_bench::spec::parse(&path, &profile).unwrap();
                    assert!(
                        parsed.raw.stop.is_some(),
                        "{} has no [stop]",
                        path.display()
                    );
                }
            }
        }
    }
}
