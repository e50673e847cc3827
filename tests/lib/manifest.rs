//! Manifest loading: every bad manifest must be reported with file, line and key.

use std::path::{Path, PathBuf};

use dpca_bench::plan;

use dpca_bench::spec::{self, DataSpec, Experiment, Gen, ManifestError, Scheme, Spectrum, XAxis};

const GOOD: &str = r#"id = "table9"
paper = "faps"
paper_file = "000_87ac87c3d542a13b.txt"
title = "test manifest"
reproduces = "Table 9"
seed = 7

[data]
generator = "svd"
spectrum = "geometric"
n = 20
m = 640
xi = 1.01

[partition]
scheme = "even"
clients = 8

[problem]
p = 4

[stop]
max_rounds = 300
objective_tol = 1e-10

[[methods]]
name = "ssi"
label = "SSI"

[[methods]]
name = "faps"
params = { inner = "fixed", inner_steps = [3, 5] }

[[plots]]
file = "convergence_kkt"
x = "rounds"
y = "kkt"

[[paper_results]]
method = "SSI"
rounds = 207
sv_err = 1.09e-7

[profiles.quick]
data = { n = 10, m = 320 }
partition = { clients = 4 }

[profiles.paper]
"#;

const FILE: &str = "table9.toml";

/// The svd generator's keys of a point's data.
fn svd(d: &DataSpec) -> &spec::Svd {
    match &d.gen {
        Gen::Svd(s) => s,
        other => panic!("not svd data: {other:?}"),
    }
}

struct Written {
    _dir: tempfile::TempDir,
    path: PathBuf,
    text: String,
}

fn write(text: &str) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE);
    std::fs::write(&path, text).unwrap();
    Written {
        _dir: dir,
        path,
        text: text.to_string(),
    }
}

/// GOOD with `from` replaced by `to` (which must occur exactly once).
fn edit(from: &str, to: &str) -> Written {
    assert_eq!(
        GOOD.matches(from).count(),
        1,
        "test bug: {from:?} must occur once"
    );
    write(&GOOD.replacen(from, to, 1))
}

/// 1-based line of the only line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "test bug: {needle:?} is on lines {hits:?}");
    hits[0]
}

fn load_err(w: &Written, profile: &str) -> ManifestError {
    match plan::load(&w.path, profile) {
        Ok(_) => panic!("expected an error for:\n{}", w.text),
        Err(e) => e,
    }
}

/// The error names the file, `line` and `key`, and its message mentions every `words`.
#[track_caller]
fn expect(err: &ManifestError, line: usize, key: &str, words: &[&str]) {
    let s = err.to_string();
    assert!(
        s.contains(&format!("{FILE}:{line}:")),
        "want line {line} in: {s}"
    );
    assert!(
        s.contains(&format!("key `{key}`")),
        "want key `{key}` in: {s}"
    );
    assert_eq!(err.line(), Some(line), "{s}");
    assert_eq!(err.key(), Some(key), "{s}");
    for w in words {
        assert!(s.contains(w), "want {w:?} in: {s}");
    }
}

fn load_ok(w: &Written, profile: &str) -> Experiment {
    plan::load(&w.path, profile).unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------- good manifests

#[test]
fn good_manifest_paper_profile() {
    let w = write(GOOD);
    let e = load_ok(&w, "paper");
    assert_eq!(e.id, "table9");
    assert_eq!(e.profile, "paper");
    assert_eq!(e.repeats, 1);
    assert_eq!(e.seed, 7);
    assert_eq!(e.hash.len(), 64);
    assert!(e.hash.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(e.points.len(), 1);
    let p = &e.points[0];
    assert_eq!(p.label, "");
    assert!(p.coords.is_empty());
    assert_eq!((p.data.n, p.data.m, svd(&p.data).xi), (20, 640, Some(1.01)));
    assert_eq!(svd(&p.data).spectrum, Spectrum::Geometric);
    assert_eq!((p.partition.scheme, p.partition.clients), (Scheme::Even, 8));
    assert_eq!(p.problem.p, 4);
    assert_eq!(e.stop.max_rounds, 300);
    assert_eq!(e.stop.objective_tol, Some(1e-10));
    assert_eq!(e.plots[0].x, XAxis::Rounds);
    assert_eq!(e.plots[0].y, "kkt");
    assert!(e.plots[0].log_y, "log_y defaults to true");
    assert_eq!(e.paper_results[0].rounds, Some(207));
    assert_eq!(p.data.cache_key(), "svd-geometric-n20-m640-xi1.01");
    assert_eq!(spec::profile_names(&w.path).unwrap(), ["quick", "paper"]);
}

#[test]
fn good_manifest_quick_profile_overlays() {
    let w = write(GOOD);
    let e = load_ok(&w, "quick");
    let p = &e.points[0];
    // Overlaid keys replaced, the others kept (tables merge key by key).
    assert_eq!((p.data.n, p.data.m), (10, 320));
    assert_eq!(svd(&p.data).xi, Some(1.01));
    assert_eq!(svd(&p.data).spectrum, Spectrum::Geometric);
    assert_eq!(p.partition.clients, 4);
    assert_eq!(p.partition.scheme, Scheme::Even);
    assert_eq!(p.problem.p, 4);
    assert_eq!(e.hash, load_ok(&w, "paper").hash);
}

#[test]
fn profile_arrays_replace() {
    let w = edit(
        "[profiles.paper]",
        "[profiles.paper]\nmethods = [{ name = \"faps\" }]\npaper_results = []",
    );
    assert_eq!(load_ok(&w, "quick").methods.len(), 3);
    let e = load_ok(&w, "paper");
    assert_eq!(e.methods.len(), 1);
    assert_eq!(e.methods[0].name, "faps");
    assert!(e.methods[0].params.is_empty());
    // Without replacing paper_results, "SSI" no longer names a method.
    let w = edit(
        "[profiles.paper]",
        "[profiles.paper]\nmethods = [{ name = \"faps\" }]",
    );
    let err = load_err(&w, "paper");
    expect(
        &err,
        line_of(&w.text, "method = \"SSI\""),
        "paper_results[0].method",
        &["not a method"],
    );
}

#[test]
fn sweep_expands_points_in_order() {
    let w = edit(
        "[profiles.quick]",
        "[sweep]\n\"data.n\" = [20, 30]\n\"problem.p\" = [2, 4, 6]\n\n[profiles.quick]",
    );
    let e = load_ok(&w, "paper");
    let labels: Vec<&str> = e.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        ["n=20,p=2", "n=20,p=4", "n=20,p=6", "n=30,p=2", "n=30,p=4", "n=30,p=6"]
    );
    assert_eq!(e.points[4].data.n, 30);
    assert_eq!(e.points[4].problem.p, 4);
    assert_eq!(e.points[4].data.m, 640, "unswept keys keep their value");
    assert_eq!(
        e.points[4].coords[0],
        ("data.n".to_string(), toml::Value::Integer(30))
    );
    // The sweep overrides the profile's value of the same key.
    let q = load_ok(&w, "quick");
    assert_eq!(q.points[3].data.n, 30);
    assert_eq!(q.points[3].data.m, 320);
}

#[test]
fn sweep_in_profile_and_float_labels() {
    let w = edit(
        "[profiles.paper]",
        "[profiles.paper.sweep]\n\"data.xi\" = [1.1, 1.001]\n",
    );
    let e = load_ok(&w, "paper");
    let labels: Vec<&str> = e.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["xi=1.1", "xi=1.001"]);
    assert_eq!(load_ok(&w, "quick").points.len(), 1);
}

#[test]
fn method_params_expand_deterministically() {
    let w = edit(
        "params = { inner = \"fixed\", inner_steps = [3, 5] }",
        "params = { theta = [0.1, 0.2], inner = \"fixed\", inner_steps = [3, 5] }",
    );
    let e = load_ok(&w, "paper");
    let v: Vec<(usize, &str, &str)> = e
        .methods
        .iter()
        .map(|m| (m.index, m.label.as_str(), m.variant.as_str()))
        .collect();
    assert_eq!(
        v,
        [
            (0, "SSI", ""),
            (1, "faps", "inner_steps=3,theta=0.1"),
            (1, "faps", "inner_steps=3,theta=0.2"),
            (1, "faps", "inner_steps=5,theta=0.1"),
            (1, "faps", "inner_steps=5,theta=0.2"),
        ]
    );
    let m = &e.methods[3];
    assert_eq!(m.params.get("inner_steps"), Some(&toml::Value::Integer(5)));
    assert_eq!(m.params.get("theta"), Some(&toml::Value::Float(0.1)));
    assert_eq!(
        m.params.get("inner"),
        Some(&toml::Value::String("fixed".into()))
    );
    assert!(m.params.values().all(|v| !v.is_array()));
    assert_eq!(m.full_label(), "faps (inner_steps=5,theta=0.1)");
}

#[test]
fn error_at_locates_keys_for_later_checks() {
    let w = write(GOOD);
    let e = load_ok(&w, "quick");
    let err = e.error_at(
        "methods[1].params.inner_steps",
        "unknown parameter for faps",
    );
    expect(
        &err,
        line_of(GOOD, "inner_steps = [3, 5]"),
        "methods[1].params.inner_steps",
        &["unknown parameter"],
    );
    // Overlaid by the active profile: the profile's line.
    let err = e.error_at("data.n", "too big");
    expect(
        &err,
        line_of(GOOD, "data = { n = 10, m = 320 }"),
        "data.n",
        &["too big"],
    );
    // Not in the profile: the base line.
    expect(
        &e.error_at("data.xi", "x"),
        line_of(GOOD, "xi = 1.01"),
        "data.xi",
        &[],
    );
    expect(
        &e.error_at("methods[0]", "x"),
        line_of(GOOD, "name = \"ssi\"") - 1,
        "methods[0]",
        &[],
    );
    let p = load_ok(&w, "paper");
    expect(
        &p.error_at("data.n", "x"),
        line_of(GOOD, "n = 20"),
        "data.n",
        &[],
    );
}

#[test]
fn real_manifests_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/faps");
    for id in ["table1", "table4"] {
        let path = root.join(format!("{id}.toml"));
        let names = spec::profile_names(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            names.iter().any(|n| n == "paper") && names.iter().any(|n| n == "quick"),
            "{names:?}"
        );
        for profile in ["paper", "quick"] {
            let e = plan::load(&path, profile).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(e.id, id);
            assert_eq!(e.points.len(), 1);
            for r in &e.paper_results {
                assert!(e
                    .methods
                    .iter()
                    .any(|m| m.name == r.method || m.label == r.method));
            }
        }
    }
    let t1 = plan::load(&root.join("table1.toml"), "paper").unwrap();
    let p = &t1.points[0];
    assert_eq!(
        (
            p.data.n,
            p.data.m,
            svd(&p.data).xi,
            p.problem.p,
            p.partition.clients
        ),
        (2000, 128000, Some(1.01), 20, 128)
    );
    let t4 = plan::load(&root.join("table4.toml"), "paper").unwrap();
    let p = &t4.points[0];
    assert_eq!(p.partition.scheme, Scheme::Uneven);
    assert_eq!(
        p.partition.client_sizes(p.data.m),
        (1..=8).map(|i| 1000 * i).collect::<Vec<_>>()
    );
    let q = &plan::load(&root.join("table4.toml"), "quick")
        .unwrap()
        .points[0];
    assert_eq!(
        q.partition.client_sizes(q.data.m).iter().sum::<usize>(),
        q.data.m
    );
}

#[test]
fn even_partition_sizes() {
    let w = edit("m = 640", "m = 643");
    let p = &load_ok(&w, "paper").points[0];
    assert_eq!(
        p.partition.client_sizes(643),
        [81, 81, 81, 80, 80, 80, 80, 80]
    );
}

// ---------------------------------------------------------------- syntax and serde errors

#[test]
fn syntax_error_has_line_and_column() {
    let w = edit("m = 640", "m = 640 640");
    let err = load_err(&w, "paper");
    let s = err.to_string();
    assert_eq!(err.line(), Some(line_of(&w.text, "m = 640 640")));
    assert!(
        s.starts_with(&format!("{}:{}:", w.path.display(), err.line().unwrap())),
        "{s}"
    );
    assert!(s.contains("invalid TOML"), "{s}");
}

#[test]
fn duplicate_key_is_a_syntax_error() {
    let w = edit("m = 640", "m = 640\nm = 641");
    let err = load_err(&w, "paper");
    assert_eq!(err.line(), Some(line_of(&w.text, "m = 641")), "{err}");
}

#[test]
fn unknown_key() {
    let w = edit("xi = 1.01", "xi = 1.01\nkapa = 3.0");
    let err = load_err(&w, "paper");
    expect(
        &err,
        line_of(&w.text, "kapa"),
        "data.kapa",
        &["unknown field `kapa`", "kappa"],
    );
}

#[test]
fn unknown_top_level_key() {
    let w = edit("seed = 7", "seed = 7\nseeds = 8");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "seeds = 8"),
        "seeds",
        &["unknown field"],
    );
}

#[test]
fn unknown_key_in_array_of_tables() {
    let w = edit("name = \"faps\"", "name = \"faps\"\nlabl = \"FAPS\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "labl"),
        "methods[1].labl",
        &["unknown field `labl`"],
    );
}

#[test]
fn unknown_key_in_profile() {
    let w = edit(
        "partition = { clients = 4 }",
        "partition = { clients = 4, client = 5 }",
    );
    let err = load_err(&w, "quick");
    expect(
        &err,
        line_of(&w.text, "client = 5"),
        "partition.client",
        &["unknown field"],
    );
    // The paper profile does not see the quick profile's mistake.
    load_ok(&w, "paper");
}

#[test]
fn wrong_type() {
    let w = edit("n = 20", "n = \"twenty\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "twenty"),
        "data.n",
        &["invalid type", "usize"],
    );
    let w = edit("n = 20", "n = 20.5");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "n = 20.5"),
        "data.n",
        &["invalid type"],
    );
    let w = edit("seed = 7", "seed = -7");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "seed = -7"),
        "seed",
        &["u64"],
    );
}

#[test]
fn missing_key_points_at_its_table() {
    let w = edit("clients = 8\n", "");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[partition]"),
        "partition.clients",
        &["missing field `clients`"],
    );
    let w = edit("[stop]\nmax_rounds = 300\n", "[stop]\n");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[stop]"),
        "stop.max_rounds",
        &["missing field"],
    );
}

#[test]
fn plot_with_unknown_axes() {
    let w = edit("x = \"rounds\"", "x = \"iterations\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "iterations"),
        "plots[0].x",
        &["unknown variant", "rounds", "bytes"],
    );
    let w = edit("y = \"kkt\"", "y = \"error\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"error\""),
        "plots[0].y",
        &["not a metric of the `subspace` family", "sv_err"],
    );
}

// ---------------------------------------------------------------- semantic errors

#[test]
fn p_exceeds_n() {
    let w = edit("p = 4", "p = 30");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "p = 30"),
        "problem.p",
        &["problem.p = 30 exceeds data.n = 20", "p must be <= n"],
    );
}

#[test]
fn p_exceeds_n_in_profile_points_at_profile() {
    let w = edit(
        "partition = { clients = 4 }",
        "partition = { clients = 4 }\nproblem = { p = 15 }",
    );
    // n = 20 in the base: fine; the quick profile has n = 10.
    load_ok(&w, "paper");
    expect(
        &load_err(&w, "quick"),
        line_of(&w.text, "problem = { p = 15 }"),
        "problem.p",
        &["problem.p = 15 exceeds data.n = 10"],
    );
    // The profile shrinks n below the base p: the profile's n is what changed.
    let w = edit("data = { n = 10, m = 320 }", "data = { n = 3, m = 320 }");
    expect(
        &load_err(&w, "quick"),
        line_of(&w.text, "n = 3,"),
        "data.n",
        &["problem.p = 4 exceeds data.n = 3"],
    );
}

#[test]
fn p_exceeds_n_at_a_sweep_point() {
    let w = edit(
        "[profiles.quick]",
        "[sweep]\n\"data.n\" = [20, 3]\n\n[profiles.quick]",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"data.n\" = [20, 3]"),
        "data.n",
        &["exceeds data.n = 3", "sweep point n=3"],
    );
}

#[test]
fn p_zero() {
    let w = edit("p = 4", "p = 0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "p = 0"),
        "problem.p",
        &["must be >= 1"],
    );
}

#[test]
fn clients_zero_and_too_many() {
    let w = edit("clients = 8", "clients = 0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "clients = 0"),
        "partition.clients",
        &["at least 1 client"],
    );
    let w = edit("clients = 8", "clients = 700");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "clients = 700"),
        "partition.clients",
        &["exceeds data.m = 640"],
    );
}

#[test]
fn n_exceeds_m() {
    let w = edit("m = 640", "m = 10");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "n = 20"),
        "data.n",
        &["data.n = 20 exceeds data.m = 10", "m >= n"],
    );
    // Only the profile changed m: blame the profile's m.
    let w = edit("data = { n = 10, m = 320 }", "data = { m = 15 }");
    expect(
        &load_err(&w, "quick"),
        line_of(&w.text, "m = 15"),
        "data.m",
        &["data.n = 20 exceeds data.m = 15"],
    );
}

#[test]
fn uneven_needs_matching_m() {
    // d = 8: m = unit·36.
    let w = edit("scheme = \"even\"", "scheme = \"uneven\"");
    let err = load_err(&w, "paper");
    expect(
        &err,
        line_of(&w.text, "m = 640"),
        "data.m",
        &["unit·36", "m = 612 (unit 17)", "m = 648 (unit 18)"],
    );
    let w = edit("m = 640", "m = 648");
    let w = write(&w.text.replace("scheme = \"even\"", "scheme = \"uneven\""));
    let p = &load_ok(&w, "paper").points[0];
    assert_eq!(
        p.partition.client_sizes(648),
        (1..=8).map(|i| 18 * i).collect::<Vec<_>>()
    );
    // An explicit unit that disagrees with m names the expected m.
    let w = write(&w.text.replace("clients = 8", "clients = 8\nunit = 20"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "m = 648"),
        "data.m",
        &["needs data.m = unit·d(d+1)/2 = 720, not 648"],
    );
}

#[test]
fn geometric_needs_xi_above_one() {
    let w = edit("xi = 1.01\n", "");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[data]"),
        "data.xi",
        &["missing", "xi > 1"],
    );
    let w = edit("xi = 1.01", "xi = 1.0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "xi = 1.0"),
        "data.xi",
        &["xi > 1"],
    );
}

#[test]
fn arithmetic_needs_kappa_at_least_one() {
    let w = edit(
        "spectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
        "spectrum = \"arithmetic\"\nn = 20\nm = 640\nkappa = 0.5",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "kappa = 0.5"),
        "data.kappa",
        &["kappa >= 1"],
    );
    let w = edit("xi = 1.01", "xi = 1.01\nkappa = 10");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "kappa = 10"),
        "data.kappa",
        &["only used by spectrum = \"arithmetic\""],
    );
}

#[test]
fn stop_rules() {
    let w = edit("max_rounds = 300", "max_rounds = 0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "max_rounds = 0"),
        "stop.max_rounds",
        &[">= 1"],
    );
    let w = edit("objective_tol = 1e-10", "objective_tol = -1e-10");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "objective_tol"),
        "stop.objective_tol",
        &[">= 0"],
    );
    let w = edit(
        "objective_tol = 1e-10",
        "target = { metric = \"kkt\", value = -1.0 }",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "target ="),
        "stop.target.value",
        &[">= 0"],
    );
    let w = edit(
        "objective_tol = 1e-10",
        "target = { metric = \"kkt_\", value = 1e-6 }",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "target ="),
        "stop.target.metric",
        &["not a metric", "`kkt`"],
    );
    let w = edit("objective_tol = 1e-10", "time_budget_s = 0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "time_budget_s"),
        "stop.time_budget_s",
        &["> 0"],
    );
}

/// `looser_tolerances` must loosen the stop rule: above stop.objective_tol, below 1, and only
/// where there is a rule (27) to loosen.
#[test]
fn looser_tolerances() {
    let w = edit("seed = 7", "seed = 7\nlooser_tolerances = [1e-9, 3e-9]");
    let e = load_ok(&w, "paper");
    assert_eq!(e.looser_tolerances, [1e-9, 3e-9]);
    for (bad, why) in [
        ("[1e-9, 1e-11]", "above stop.objective_tol = 1e-10"),
        ("[2.0]", "below 1"),
    ] {
        let w = edit("seed = 7", &format!("seed = 7\nlooser_tolerances = {bad}"));
        expect(
            &load_err(&w, "paper"),
            line_of(&w.text, "looser_tolerances"),
            if bad.contains("1e-11") {
                "looser_tolerances[1]"
            } else {
                "looser_tolerances[0]"
            },
            &[why],
        );
    }
    let w = write(
        &GOOD
            .replacen("seed = 7", "seed = 7\nlooser_tolerances = [1e-9]", 1)
            .replacen("objective_tol = 1e-10\n", "", 1),
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "looser_tolerances"),
        "looser_tolerances[0]",
        &["set stop.objective_tol"],
    );
}

#[test]
fn unknown_profile_lists_existing() {
    let w = write(GOOD);
    let err = load_err(&w, "fast");
    expect(
        &err,
        line_of(GOOD, "[profiles.quick]"),
        "profiles",
        &["unknown profile `fast`", "defines `quick`, `paper`"],
    );
}

#[test]
fn sweep_key_errors() {
    let add = |s: &str| {
        edit(
            "[profiles.quick]",
            &format!("[sweep]\n{s}\n\n[profiles.quick]"),
        )
    };
    let w = add("\"data.nn\" = [1, 2]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "data.nn"),
        "sweep.\"data.nn\"",
        &["does not exist", "expected one of"],
    );
    let w = add("\"stop.max_rounds\" = [1, 2]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "stop.max_rounds"),
        "sweep.\"stop.max_rounds\"",
        &["cannot be swept", "`data`"],
    );
    let w = add("\"data.n\" = 30");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"data.n\" = 30"),
        "sweep.\"data.n\"",
        &["expected a list"],
    );
    let w = add("\"data.n\" = []");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"data.n\" = []"),
        "sweep.\"data.n\"",
        &["empty list"],
    );
    let w = add("\"data.n\" = [30, \"x\"]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"data.n\" = [30"),
        "data.n",
        &["invalid type", "sweep point n=x"],
    );
}

#[test]
fn other_semantic_errors() {
    let w = edit("method = \"SSI\"", "method = \"LocalPower\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "LocalPower"),
        "paper_results[0].method",
        &["`ssi`, `SSI`, `faps`"],
    );
    let w = edit("name = \"faps\"", "name = \"ssi\"\nlabel = \"SSI\" # again");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "# again"),
        "methods[1].label",
        &["already used by methods[0]"],
    );
    let w = edit("id = \"table9\"", "id = \"table1\"");
    expect(&load_err(&w, "paper"), 1, "id", &["file name"]);
    let w = edit("seed = 7", "seed = 7\nrepeats = 0");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "repeats"),
        "repeats",
        &["at least 1"],
    );
    let w = edit("inner_steps = [3, 5]", "inner_steps = []");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "inner_steps"),
        "methods[1].params.inner_steps",
        &["empty list"],
    );
}

#[test]
fn unreadable_file() {
    let err = plan::load(Path::new("/nonexistent/table9.toml"), "paper").unwrap_err();
    assert_eq!(err.line(), None);
    assert!(
        err.to_string()
            .starts_with("/nonexistent/table9.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn dataset_manifests_name_a_known_dataset_and_reject_generator_keys() {
    let dir = tempfile::tempdir().unwrap();
    let base = r#"id = "ds"
paper = "faps"
paper_file = "x.txt"
title = "t"
reproduces = "r"
seed = 1

[data]
generator = "dataset"
dataset = "mnist"
preprocess = ["scale01", "center"]
n = 784
m = 6000

[partition]
scheme = "even"
clients = 16

[problem]
p = 5

[stop]
max_rounds = 10

[[methods]]
name = "ssi"

[profiles.quick]
"#;
    let path = dir.path().join("ds.toml");
    std::fs::write(&path, base).unwrap();
    let exp = dpca_bench::plan::load(&path, "quick").unwrap();
    assert!(matches!(&exp.points[0].data.gen, Gen::Dataset(d) if d.dataset == "mnist"));

    std::fs::write(
        &path,
        base.replace("dataset = \"mnist\"", "dataset = \"mnest\""),
    )
    .unwrap();
    let err = dpca_bench::plan::load(&path, "quick")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ds.toml:10") && err.contains("data.dataset") && err.contains("mnist"),
        "{err}"
    );

    std::fs::write(&path, base.replace("m = 6000", "m = 6000\nxi = 1.01")).unwrap();
    let err = dpca_bench::plan::load(&path, "quick")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ds.toml:14") && err.contains("data.xi"),
        "{err}"
    );
    // Sparse (LIBSVM) data stays sparse: centring would densify it; rescaling is allowed.
    let rcv1 = base
        .replace("dataset = \"mnist\"", "dataset = \"rcv1-binary\"")
        .replace("n = 784", "n = 47236");
    std::fs::write(&path, &rcv1).unwrap();
    let err = dpca_bench::plan::load(&path, "quick")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ds.toml:11")
            && err.contains("data.preprocess")
            && err.contains("densify")
            && err.contains("scale01"),
        "{err}"
    );
    std::fs::write(
        &path,
        rcv1.replace("[\"scale01\", \"center\"]", "[\"unit_top\"]"),
    )
    .unwrap();
    dpca_bench::plan::load(&path, "quick").unwrap();
}

/// `paper_results[].point` ties a number to one sweep point; it must name a point of the paper
/// profile, and a manifest without a sweep has no points to name.
#[test]
fn paper_result_points_are_checked() {
    let w = edit("rounds = 207", "rounds = 207\npoint = \"n=20\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "point = "),
        "paper_results[0].point",
        &["no [sweep]"],
    );
    let swept = GOOD.replace(
        "[profiles.quick]",
        "[sweep]\n\"data.n\" = [20, 30]\n\n[profiles.quick]",
    );
    let w = write(&swept.replace("rounds = 207", "rounds = 207\npoint = \"n=25\""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "point = "),
        "paper_results[0].point",
        &["\"n=25\"", "`n=20`, `n=30`"],
    );
    // The quick profile has other points; a paper-sized point is simply not shown there.
    plan::load(&w.path, "quick").unwrap();
    let w = write(&swept.replace("rounds = 207", "rounds = 207\npoint = \"n=30\""));
    let e = plan::load(&w.path, "paper").unwrap();
    assert_eq!(e.paper_results[0].point.as_deref(), Some("n=30"));
}

// ---------------------------------------------------------------- families and methods

#[test]
fn misspelt_or_foreign_method_names_are_rejected_where_they_are_written() {
    let w = edit("name = \"ssi\"", "name = \"sssi\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "sssi"),
        "methods[0].name",
        &["unknown method `sssi`", "ssi, faps"],
    );
    let w = edit("name = \"ssi\"", "name = \"SSI\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "name = \"SSI\""),
        "methods[0].name",
        &["did you mean `ssi`"],
    );
    // Misspelt where the paper's numbers refer to it: the name is what is reported.
    let w = edit("name = \"ssi\"\nlabel = \"SSI\"", "name = \"sssi\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "sssi"),
        "methods[0].name",
        &["unknown method `sssi`"],
    );
    // A robust method in a subspace manifest.
    let w = edit("name = \"ssi\"", "name = \"dcfpca\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "dcfpca"),
        "methods[0].name",
        &["solves `robust` problems", "`subspace`"],
    );
    // Parameters are checked at load, with their key.
    let w = edit("inner_steps = [3, 5]", "inner_steps = [3, 0]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "inner_steps"),
        "methods[1].params.inner_steps",
        &[">= 1"],
    );
}

#[test]
fn paper_numbers_and_plots_name_the_family_metrics() {
    let w = edit("sv_err = 1.09e-7", "sv_er = 1.09e-7");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "sv_er ="),
        "paper_results[0].sv_er",
        &["not a metric of the `subspace` family", "`sv_err`"],
    );
    let w = edit("y = \"kkt\"", "y = \"err\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "\"err\""),
        "plots[0].y",
        &["not a metric"],
    );
}

/// A robust manifest: the generator's keys are checked, the rank bound defaults to the rank,
/// and a zipped sweep pairs its lists.
#[test]
fn robust_manifests_are_checked_and_zip_sweeps_pair_their_lists() {
    let robust = GOOD
        .replace(
            "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
            "generator = \"robust\"\nn = 20\nm = 640\nrank = 2\nsparsity = 0.05",
        )
        .replace("[problem]\np = 4", "[problem]\nkind = \"robust\"")
        .replace(
            "name = \"ssi\"\nlabel = \"SSI\"",
            "name = \"dcfpca\"\nlabel = \"SSI\"",
        )
        .replace(
            "name = \"faps\"\nparams = { inner = \"fixed\", inner_steps = [3, 5] }",
            "name = \"apgm\"",
        )
        .replace("y = \"kkt\"", "y = \"err\"")
        .replace("sv_err = 1.09e-7", "err = 1e-6");
    let w = write(&robust);
    let e = plan::load(&w.path, "paper").unwrap();
    assert_eq!(e.points[0].problem.p, 2, "p defaults to the rank");

    // Only the subspace family's traces are read at looser tolerances.
    let w = write(&robust.replacen("seed = 7", "seed = 7\nlooser_tolerances = [1e-9]", 1));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "looser_tolerances"),
        "looser_tolerances",
        &["subspace family", "robust"],
    );

    let w = write(&robust.replace("rank = 2\n", ""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[data]"),
        "data.rank",
        &["missing", "rank"],
    );
    let w = write(&robust.replace("kind = \"robust\"", "kind = \"robust\"\np = 1"));
    let e = load_err(&w, "paper");
    assert!(e.to_string().contains("rank bound"), "{e}");
    let w = write(&robust.replace("sparsity = 0.05", "sparsity = 1.5"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "sparsity"),
        "data.sparsity",
        &["[0, 1)"],
    );

    let zipped = robust.replace(
        "[stop]",
        "[sweep]\n\"data.rank\" = [1, 2, 3]\n\"data.sparsity\" = [0.05, 0.1, 0.2]\n\n[stop]",
    );
    let w = write(&zipped.replace("seed = 7", "seed = 7\nzip_sweep = true"));
    let e = plan::load(&w.path, "paper").unwrap();
    assert_eq!(e.points.len(), 3, "zipped, not crossed");
    assert!(matches!(&e.points[2].data.gen, Gen::Robust(r) if (r.rank, r.sparsity) == (3, 0.2)));
    let w = write(&zipped);
    assert_eq!(plan::load(&w.path, "paper").unwrap().points.len(), 9);
    let w = write(
        &zipped
            .replace("seed = 7", "seed = 7\nzip_sweep = true")
            .replace("[0.05, 0.1, 0.2]", "[0.05, 0.1]"),
    );
    let e = load_err(&w, "paper");
    assert!(e.to_string().contains("one length"), "{e}");
}

/// A sparse-PCA manifest: the spiked generator's and the noise features' keys are checked where
/// they are written, and the `final` plot needs its parameters.
#[test]
fn sparse_manifests_check_their_generator_noise_and_plot_keys() {
    let sparse = GOOD
        .replace(
            "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
            "generator = \"spiked\"\nn = 20\nm = 640\nspikes = [40.0, 30.0]\nsupport = 5",
        )
        .replace("[problem]\np = 4", "[problem]\nkind = \"sparse\"\np = 2")
        .replace(
            "name = \"ssi\"\nlabel = \"SSI\"",
            "name = \"faspca\"\nlabel = \"SSI\"",
        )
        .replace(
            "name = \"faps\"\nparams = { inner = \"fixed\", inner_steps = [3, 5] }",
            "name = \"fsspca\"\nparams = { lambda1 = [1.0, 2.0] }",
        )
        .replace("y = \"kkt\"", "y = \"recovery\"")
        .replace("sv_err = 1.09e-7", "recovery = 0.02");
    let w = write(&sparse);
    let e = plan::load(&w.path, "paper").unwrap();
    assert_eq!(e.points[0].problem.p, 2);

    let w = write(&sparse.replace("support = 5", "support = 15"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "support = 15"),
        "data.support",
        &["support·spikes <= n"],
    );
    let w = write(&sparse.replace("spikes = [40.0, 30.0]", "spikes = [40.0, 0.5]"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "spikes ="),
        "data.spikes",
        &["> 1"],
    );
    let w = write(&sparse.replace("support = 5", "support = 5\nnoise_features = 10"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "noise_features"),
        "data.noise_features",
        &["only used with", "dataset"],
    );
    let w = write(&sparse.replace("kind = \"sparse\"", "kind = \"subspace\""));
    let e = load_err(&w, "paper");
    assert!(
        e.to_string().contains("kind = \\\"sparse\\\"") || e.to_string().contains("sparse"),
        "{e}"
    );
    let w = write(&sparse.replace("y = \"recovery\"", "kind = \"final\"\ny = \"recovery\""));
    let e = load_err(&w, "paper");
    assert!(e.to_string().contains("needs params"), "{e}");
    let w = write(&sparse.replace("p = 2", "p = 2\nlambda = -1.0"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "lambda = -1.0"),
        "problem.lambda",
        &[">= 0"],
    );
}

/// The eigvec family: generator "eigengap" with its δ, p = 1, negative log-error targets.
#[test]
fn eigvec_manifests_check_generator_delta_and_p() {
    let eig = GOOD
        .replace(
            "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
            "generator = \"eigengap\"\nn = 20\nm = 640\ndelta = 0.2",
        )
        .replace("[problem]\np = 4", "[problem]\nkind = \"eigvec\"\np = 1")
        .replace(
            "objective_tol = 1e-10",
            "target = { metric = \"log_err\", value = -25.0 }",
        )
        .replace(
            "name = \"ssi\"\nlabel = \"SSI\"",
            "name = \"cedre\"\nlabel = \"SSI\"",
        )
        .replace(
            "name = \"faps\"\nparams = { inner = \"fixed\", inner_steps = [3, 5] }",
            "name = \"cedre\"\nlabel = \"CEDRE I\"\nparams = { combine = \"random\" }",
        )
        .replace("y = \"kkt\"", "y = \"log_err\"")
        .replace("sv_err = 1.09e-7", "log_err = -32.0");
    let w = write(&eig);
    let e = plan::load(&w.path, "paper").unwrap();
    assert!(matches!(&e.points[0].data.gen, Gen::Eigengap(g) if g.delta == 0.2));

    let w = write(&eig.replace("delta = 0.2", "delta = 1.5"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "delta ="),
        "data.delta",
        &["(0, 1)"],
    );
    let w = write(&eig.replace("delta = 0.2\n", ""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[data]"),
        "data.delta",
        &["missing"],
    );
    let w = write(&eig.replace("kind = \"eigvec\"\np = 1", "kind = \"eigvec\"\np = 2"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "p = 2"),
        "problem.p",
        &["p = 1"],
    );
    let w = write(&eig.replace("kind = \"eigvec\"\n", ""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[problem]"),
        "problem.kind",
        &["eigengap", "eigvec"],
    );
    // Subspace methods at p = 1 run on eigvec problems; a robust method does not.
    let w = write(&eig.replace(
        "name = \"cedre\"\nlabel = \"SSI\"",
        "name = \"ssi\"\nlabel = \"SSI\"",
    ));
    plan::load(&w.path, "paper").unwrap();
    let w = write(&eig.replace(
        "name = \"cedre\"\nlabel = \"SSI\"",
        "name = \"apgm\"\nlabel = \"SSI\"",
    ));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "name = \"apgm\""),
        "methods[0].name",
        &["robust", "eigvec"],
    );
    // sin2 is positive: a negative target can never be met
    let w = write(&eig.replace("metric = \"log_err\"", "metric = \"sin2\""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "target ="),
        "stop.target.value",
        &[">= 0"],
    );
}

/// Paper numbers and claims name the configuration the paper ran: a method name shared by several
/// labelled entries is ambiguous, and a claim must name one parameter variant.
#[test]
fn paper_numbers_and_claims_name_one_entry() {
    let sub = |w: &Written, from: &str, to: &str| write(&w.text.replacen(from, to, 1));
    let two = "[[methods]]\nname = \"faps\"\nlabel = \"FAPS rule\"\nparams = { inner = \"rule\" }\n\n[[plots]]";
    let w = edit("[[plots]]", two);
    let w = sub(
        &w,
        "name = \"faps\"\n",
        "name = \"faps\"\nlabel = \"FAPS fixed\"\n",
    );
    let w = sub(&w, "method = \"SSI\"", "method = \"faps\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "method = \"faps\""),
        "paper_results[0].method",
        &["2 [[methods]] entries", "`FAPS fixed`, `FAPS rule`"],
    );
    // The entry's label, or one variant by its full label, is fine.
    let ok = sub(
        &w,
        "method = \"faps\"",
        "method = \"FAPS fixed (inner_steps=5)\"",
    );
    let e = load_ok(&ok, "paper");
    assert!(e.names_run(
        &e.paper_results[0].method,
        "faps",
        "FAPS fixed",
        "inner_steps=5"
    ));
    assert!(!e.names_run(
        &e.paper_results[0].method,
        "faps",
        "FAPS fixed",
        "inner_steps=3"
    ));
    assert!(!e.names_run(&e.paper_results[0].method, "faps", "FAPS rule", ""));
    // A claim about an entry with two variants must name one.
    let claim = "[[claims]]\ntext = \"t\"\nquantity = \"rounds\"\nmethod = \"FAPS fixed\"\nless_than = [\"SSI\"]\n\n[profiles.quick]";
    let c = sub(&ok, "[profiles.quick]", claim);
    expect(
        &load_err(&c, "paper"),
        line_of(&c.text, "method = \"FAPS fixed\""),
        "claims[0].method",
        &["2 parameter variants", "`FAPS fixed (inner_steps=3)`"],
    );
}

/// `[data]` is typed per generator: a key of another generator is refused, naming the
/// generators that take it; a missing key of this one says what it means.
#[test]
fn data_keys_belong_to_their_generator() {
    let w = edit("xi = 1.01", "xi = 1.01\nrank = 2");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "rank = 2"),
        "data.rank",
        &["only used with generator = \"robust\"", "not \"svd\""],
    );
    let w = edit("xi = 1.01", "xi = 1.01\npreprocess = [\"center\"]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "preprocess ="),
        "data.preprocess",
        &["generator = \"dataset\" or \"file\""],
    );
    // A key no generator has keeps serde's list of the valid ones.
    let w = edit("xi = 1.01", "xi = 1.01\nxii = 2");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "xii = 2"),
        "data.xii",
        &["unknown field `xii`", "`kappa`"],
    );
    // Missing: the key's own doc comment says what to give.
    let w = edit("spectrum = \"geometric\"\n", "");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "[data]"),
        "data.spectrum",
        &[
            "missing field `spectrum`",
            "\"geometric\"",
            "\"arithmetic\"",
        ],
    );
}

/// Noise features belong to the sparse family's real data: the svd generator never appended
/// them (the key used to be accepted there and ignored), and a subspace dataset refuses them.
#[test]
fn noise_features_only_where_they_are_appended() {
    let sparse_svd = GOOD.replace("[problem]\np = 4", "[problem]\nkind = \"sparse\"\np = 2");
    let w = write(&sparse_svd.replace("xi = 1.01", "xi = 1.01\nnoise_features = 3"));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "noise_features"),
        "data.noise_features",
        &["only used with generator = \"dataset\" or \"file\""],
    );
    let w = edit(
        "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
        "generator = \"dataset\"\ndataset = \"wdbc\"\nn = 40\nm = 569\nnoise_features = 10",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "noise_features"),
        "data.noise_features",
        &["only used with kind = \"sparse\"", "not \"subspace\""],
    );
}

/// The JSON of a point's data (hashed into run fingerprints and written to run.json) and its
/// cache key (which also seeds the data) are the flat `[data]` table of before the typed
/// specs: pinned here, since a change would silently re-draw every synthetic data set.
#[test]
fn data_json_and_cache_keys_are_pinned() {
    let cases = [
        (
            "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
            r#"{"generator":"svd","m":640,"n":20,"spectrum":"geometric","xi":1.01}"#,
            "svd-geometric-n20-m640-xi1.01",
        ),
        (
            "generator = \"robust\"\nn = 20\nm = 640\nrank = 2\nsparsity = 0.05",
            r#"{"generator":"robust","m":640,"n":20,"rank":2,"sparsity":0.05}"#,
            "robust-n20-m640-r2-s0.05-sign",
        ),
    ];
    for (data, json, key) in cases {
        let mut text = GOOD.replace(
            "generator = \"svd\"\nspectrum = \"geometric\"\nn = 20\nm = 640\nxi = 1.01",
            data,
        );
        if data.contains("robust") {
            text = text
                .replace("[problem]\np = 4", "[problem]\nkind = \"robust\"")
                .replace("name = \"ssi\"", "name = \"dcfpca\"")
                .replace(
                    "name = \"faps\"\nparams = { inner = \"fixed\", inner_steps = [3, 5] }",
                    "name = \"apgm\"",
                )
                .replace("y = \"kkt\"", "y = \"err\"")
                .replace("sv_err = 1.09e-7", "err = 1e-6");
        }
        let w = write(&text);
        let e = plan::load(&w.path, "paper").unwrap();
        let d = &e.points[0].data;
        assert_eq!(serde_json::to_value(d).unwrap().to_string(), json);
        assert_eq!(d.cache_key(), key);
    }
}

/// Abort class: sizes that would be allocated before anything runs are bounded at load:
/// repeats, rounds, and names that become file names (a 300-character label failed only after
/// its runs had computed, with "File name too long" and no key).
#[test]
fn abort_sizes_and_file_names_are_bounded_at_load() {
    let w = edit("seed = 7", "seed = 7\nrepeats = 1000000000000");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "repeats ="),
        "repeats",
        &["at most 10000"],
    );
    let w = edit("max_rounds = 300", "max_rounds = 4000000000");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "max_rounds ="),
        "stop.max_rounds",
        &["<= 1000000"],
    );
    let long = "L".repeat(300);
    let w = edit("label = \"SSI\"", &format!("label = \"{long}\""));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "label = \"LLL"),
        "methods[0].label",
        &["at most 100 characters"],
    );
    let w = edit("file = \"convergence_kkt\"", "file = \"conv\\u0000kkt\"");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "file = \"conv"),
        "plots[0].file",
        &["control characters"],
    );
    let w = edit("id = \"table9\"", "id = \"ünï\"");
    assert!(load_err(&w, "paper").to_string().contains("ASCII letters"));
}

/// The claim vocabulary's keys are checked where they are written: a claim without a test, a
/// trend of no kind or along no swept key, a method no entry has, near_paper without the paper's
/// numbers, a rate of rounds.
#[test]
fn claim_keys_are_checked_where_written() {
    let sweep = "[sweep]\n\"data.xi\" = [1.01, 1.1]\n\n[profiles.quick]";
    let with = |claim: &str, swept: bool| {
        let w = edit(
            "[profiles.quick]",
            &format!("[[claims]]\ntext = \"t\"\nmethod = \"SSI\"\n{claim}\n\n[profiles.quick]"),
        );
        if swept {
            write(&w.text.replacen("[profiles.quick]", sweep, 1))
        } else {
            w
        }
    };
    let cases: &[(&str, bool, &str, &str, &[&str])] = &[
        (
            "quantity = \"rounds\"",
            false,
            "text = \"t\"",
            "claims[0].text",
            &["needs a test"],
        ),
        (
            "quantity = \"rounds\"\ntrend = \"upward\"",
            true,
            "trend =",
            "claims[0].trend",
            &["upward", "increasing"],
        ),
        (
            "quantity = \"rounds\"\ntrend = \"increasing\"\nalong = \"kappa\"",
            true,
            "along =",
            "claims[0].along",
            &["not a swept key", "`data.xi`"],
        ),
        (
            "quantity = \"rounds\"\ntrend = \"increasing\"",
            false,
            "trend =",
            "claims[0].trend",
            &["no [sweep]"],
        ),
        (
            "quantity = \"rounds\"\nat_most = 2\ndivided_by = \"DSA\"",
            false,
            "divided_by =",
            "claims[0].divided_by",
            &["not a method of this manifest"],
        ),
        (
            "quantity = \"rounds\"\ngreater_than = [\"DSA\"]",
            false,
            "greater_than =",
            "claims[0].greater_than[0]",
            &["not a method of this manifest"],
        ),
        (
            "quantity = \"rounds\"\nless_than = [\"DSA\"]",
            false,
            "less_than =",
            "claims[0].less_than[0]",
            &["not a method of this manifest"],
        ),
        (
            "quantity = \"kkt\"\nnear_paper = 0.2",
            false,
            "near_paper =",
            "claims[0].near_paper",
            &["gives `kkt`"],
        ),
        (
            "quantity = \"rounds\"\nrate = \"linear\"",
            false,
            "rate =",
            "claims[0].rate",
            &["must be a metric"],
        ),
        (
            "quantity = \"rounds\"\nat_most = 2\ntolerance = 0.1",
            false,
            "tolerance =",
            "claims[0].tolerance",
            &["goes with trend"],
        ),
        (
            "quantity = \"rounds\"\nat_most = 2\nor_equal = true",
            false,
            "or_equal =",
            "claims[0].or_equal",
            &["goes with less_than, greater_than, above or below"],
        ),
        (
            "quantity = \"rounds\"\nrelative_to = \"start\"\nat_most = 2",
            false,
            "relative_to =",
            "claims[0].relative_to",
            &["must be a metric"],
        ),
        (
            "quantity = \"rounds\"\ntrend = \"flat\"\nat_most = 2",
            true,
            "trend =",
            "claims[0].trend",
            &["two claims"],
        ),
    ];
    for (claim, swept, line, key, words) in cases {
        let w = with(claim, *swept);
        expect(&load_err(&w, "paper"), line_of(&w.text, line), key, words);
    }
    // near_paper needs [[paper_results]] for the method at all.
    let w = write(
        &with("quantity = \"rounds\"\nnear_paper = 0.2", false)
            .text
            .replacen(
                "method = \"SSI\"\nrounds = 207",
                "method = \"faps (inner_steps=3)\"\nrounds = 207",
                1,
            ),
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "near_paper ="),
        "claims[0].near_paper",
        &["no [[paper_results]]"],
    );
    // Two swept keys: `along` says which.
    let two = with("quantity = \"rounds\"\ntrend = \"increasing\"", true);
    let two = write(&two.text.replacen(
        "\"data.xi\" = [1.01, 1.1]",
        "\"data.xi\" = [1.01, 1.1]\n\"partition.clients\" = [4, 8]",
        1,
    ));
    expect(
        &load_err(&two, "paper"),
        line_of(&two.text, "trend ="),
        "claims[0].trend",
        &["say along"],
    );
    // What is accepted loads.
    for ok in [
        ("quantity = \"rounds\"\ntrend = \"increasing\"\nalong = \"xi\"", true),
        ("quantity = \"rounds\"\nnear_paper = 0.2", false),
        ("quantity = \"kkt\"\nrate = \"linear\"\nreach = 1e-6\nrelative_to = \"start\"", false),
        ("quantity = \"rounds\"\ndivided_by = \"faps (inner_steps=3)\"\ngreater_than = [\"faps (inner_steps=5)\"]\nor_equal = true", false),
    ] {
        load_ok(&with(ok.0, ok.1), "paper");
    }
}

/// A placeholder in the prose that does not parse, or names what the manifest lacks, is an
/// error naming the key and the placeholder.
#[test]
fn placeholders_are_checked_when_the_manifest_loads() {
    let desc = |text: &str, swept: bool| {
        let w = edit("seed = 7", &format!("seed = 7\ndescription = \"{text}\""));
        if swept {
            write(&w.text.replacen(
                "[profiles.quick]",
                "[sweep]\n\"data.xi\" = [1.01, 1.1]\n\n[profiles.quick]",
                1,
            ))
        } else {
            w
        }
    };
    for (text, swept, words) in [
        (
            "took {{rounds of DSA}} rounds",
            false,
            &["`{{rounds of DSA}}`", "not a method of this manifest"][..],
        ),
        (
            "took {{speed of SSI}}",
            false,
            &["`{{speed of SSI}}`", "not a metric"],
        ),
        (
            "took {{kkt <= small of SSI}}",
            false,
            &["not a finite number"],
        ),
        (
            "took {{rounds SSI}}",
            false,
            &["`{{rounds SSI}}`", "of <method>"],
        ),
        ("took {{rounds of SSI at xi=1.01}}", false, &["no [sweep]"]),
        (
            "took {{rounds of SSI at xi=2}}",
            true,
            &["\"xi=2\" is not a sweep point", "`xi=1.01`"],
        ),
        ("took {{rounds of SSI}}", true, &["2 points", "`at`"]),
        (
            "took {{rounds of SSI / faps}}",
            false,
            &["2 parameter variants"],
        ),
        (
            "took {{objective <= 2 of SSI}}",
            false,
            &["`objective` is higher-is-better", "reach counts the rounds"],
        ),
    ] {
        let w = desc(text, swept);
        expect(
            &load_err(&w, "paper"),
            line_of(&w.text, "description ="),
            "description",
            words,
        );
    }
    // In a claim's text too.
    let w = edit("[profiles.quick]", "[[claims]]\ntext = \"{{rounds of X}}\"\nmethod = \"SSI\"\nquantity = \"rounds\"\nat_most = 5\n\n[profiles.quick]");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "{{rounds of X}}"),
        "claims[0].text",
        &["{{rounds of X}}"],
    );
    let ok = desc(
        "{{rounds of SSI at xi=1.1}}, {{kkt <= 1e-5 of SSI / faps (inner_steps=3) at xi=1.01}}",
        true,
    );
    load_ok(&ok, "paper");
    // A label holding `/` and ` at `, quoted, names its method; unquoted it does not.
    let odd = |text: &str| {
        write(
            &desc(text, false)
                .text
                .replacen("label = \"SSI\"", "label = \"SSI/2 at b\"", 1)
                .replacen(
                    "method = \"SSI\"\nrounds",
                    "method = \"SSI/2 at b\"\nrounds",
                    1,
                ),
        )
    };
    load_ok(
        &odd("{{rounds of `SSI/2 at b`}} and {{vectors of `SSI/2 at b`}}"),
        "paper",
    );
    let w = odd("{{rounds of SSI/2 at b}}");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "description ="),
        "description",
        &["\"SSI/2\" is not a method"],
    );
}

/// `reach` counts the rounds until a metric is at or below a value: refused on higher-is-better
/// metrics wherever it is written (a claim, `above`/`below` with it, a paper result), and a
/// paper result's `reach` qualifies its `rounds`, which near_paper must count the same way.
#[test]
fn reach_is_checked_where_written() {
    let claim = |c: &str| {
        edit(
            "[profiles.quick]",
            &format!("[[claims]]\ntext = \"t\"\nmethod = \"SSI\"\n{c}\n\n[profiles.quick]"),
        )
    };
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "quantity = \"objective\"\nreach = 2.0\nat_most = 5",
            "reach =",
            "claims[0].reach",
            &["`objective` is higher-is-better", "at_least"],
        ),
        (
            "quantity = \"kkt\"\nreach = 1e-5\nbelow = \"objective\"",
            "below =",
            "claims[0].below",
            &["`objective` is higher-is-better"],
        ),
        (
            "quantity = \"rounds\"\nbelow = \"kkt\"",
            "below =",
            "claims[0].below",
            &["must be a metric, not `rounds`"],
        ),
        (
            "quantity = \"kkt\"\nabove = \"sv_err\"\nbelow = \"sv_err\"",
            "below =",
            "claims[0].below",
            &["write two claims"],
        ),
        (
            "quantity = \"kkt\"\nabove = \"speed\"",
            "above =",
            "claims[0].above",
            &["\"speed\" is not a metric"],
        ),
        (
            "quantity = \"vectors\"\nreach = 3.0\nat_most = 5",
            "reach =",
            "claims[0].reach",
            &["must be a metric, not `vectors`"],
        ),
    ];
    for (c, line, key, words) in cases {
        let w = claim(c);
        expect(&load_err(&w, "paper"), line_of(&w.text, line), key, words);
    }
    for ok in [
        "quantity = \"kkt\"\nreach = 1e-5\nbelow = \"sv_err\"\nor_equal = true",
        "quantity = \"comm_vectors\"\nless_than = [\"faps (inner_steps=3)\"]",
        "quantity = \"objective\"\nat_least = 2.0",
    ] {
        load_ok(&claim(ok), "paper");
    }
    // A paper result's reach.
    let w = edit(
        "rounds = 207",
        "rounds = 207\nreach = { metric = \"objective\", value = 2.0 }",
    );
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "reach ="),
        "paper_results[0].reach.metric",
        &["`objective` is higher-is-better"],
    );
    let w = edit("rounds = 207", "reach = { metric = \"kkt\", value = 1e-6 }");
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "reach ="),
        "paper_results[0].reach",
        &["give rounds"],
    );
    let w = edit(
        "rounds = 207",
        "rounds = 207\nreach = { metric = \"kkt\", value = 1e-6 }",
    );
    let e = load_ok(&w, "paper");
    assert_eq!(
        e.paper_results[0].reach.as_ref().map(|t| t.metric.as_str()),
        Some("kkt")
    );
    // near_paper counts as the paper result does: rounds to kkt ≤ 1e-6, not the run's length.
    let w = write(&w.text.replacen(
        "[profiles.quick]",
        "[[claims]]\ntext = \"t\"\nmethod = \"SSI\"\nquantity = \"rounds\"\nnear_paper = 0.2\n\n[profiles.quick]",
        1,
    ));
    expect(
        &load_err(&w, "paper"),
        line_of(&w.text, "near_paper ="),
        "claims[0].near_paper",
        &["rounds to kkt ≤ 1e-6", "reach = 1e-6"],
    );
    let fixed = w.text.replacen(
        "quantity = \"rounds\"\nnear_paper",
        "quantity = \"kkt\"\nreach = 1e-6\nnear_paper",
        1,
    );
    load_ok(&write(&fixed), "paper");
}

/// A manifest without profiles has one, `default`, and its points are the paper's: a paper
/// result naming a point it lacks is an error there, as a placeholder's `at` is.
#[test]
fn the_default_profile_holds_the_paper_points() {
    let mut text = GOOD.replace(
        "[profiles.quick]\ndata = { n = 10, m = 320 }\npartition = { clients = 4 }\n\n[profiles.paper]\n",
        "[sweep]\n\"data.n\" = [20, 30]\n",
    );
    assert!(!text.contains("[profiles"), "test bug: {text}");
    text = text.replace("rounds = 207", "rounds = 207\npoint = \"n=25\"");
    let w = write(&text);
    expect(
        &load_err(&w, spec::DEFAULT_PROFILE),
        line_of(&w.text, "point = "),
        "paper_results[0].point",
        &[
            "\"n=25\" is not a sweep point of the default profile",
            "`n=20`, `n=30`",
        ],
    );
    load_ok(&write(&text.replace("n=25", "n=30")), spec::DEFAULT_PROFILE);
}

/// A spectrum of the family is compared entry by entry with another, by `above` or `below`
/// alone.
#[test]
fn a_spectrum_claim_needs_above_or_below_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fig5.toml");
    let fig5 = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/fspca/fig5.toml"),
    )
    .unwrap();
    let with = |c: &str| {
        let text = fig5.replacen(
            "[profiles.paper]",
            &format!("[[claims]]\ntext = \"t\"\nmethod = \"FASPCA\"\nquantity = \"share_rand\"\n{c}\n\n[profiles.paper]"),
            1,
        );
        std::fs::write(&path, &text).unwrap();
        plan::load(&path, "paper")
    };
    // The claim added after the manifest's own.
    let at = |k: &str| format!("claims[{}].{k}", fig5.matches("[[claims]]").count());
    for (c, key, words) in [
        (
            "at_least = 0.5",
            "quantity",
            &["give above or below", "`share_orig`"][..],
        ),
        (
            "above = \"share_orig\"\nat_least = 0.5",
            "at_least",
            &["remove `at_least`"],
        ),
        (
            "above = \"recon\"",
            "above",
            &["entry by entry with another spectrum"],
        ),
    ] {
        let s = with(c).expect_err(c).to_string();
        assert!(s.contains(&format!("key `{}`", at(key))), "{c}: {s}");
        for w in words {
            assert!(s.contains(w), "{c}: want {w:?} in {s}");
        }
    }
    assert!(with("above = \"share_orig\"").is_ok());
}
