//! A researcher's own data file named by a manifest (`[data] source = "…"`), end to end through
//! the `dpca` binary: CSV, LIBSVM and .npy files written here, found relative to the manifest's
//! folder (not the working directory), the same matrix giving the same runs whatever its format
//! or orientation, and clear errors for a wrong checksum, a wrong n and a wrong labels count.

use dpca_bench::data::loaders::npy;
use ndarray::{Array1, Array2, ShapeBuilder};
use ndarray_npy::WriteNpyExt;
use std::path::Path;
use std::process::{Command, Output};

/// Samples × features: 60 × 8 with a decaying spectrum, every entry exact in f32 (k/64), so
/// the f32 file holds the same matrix.
fn samples() -> Array2<f64> {
    Array2::from_shape_fn((60, 8), |(i, j)| {
        let k = (i * 37 + j * 101 + i * j * 7) % 129;
        (k as f64 - 64.0) / 64.0 * (8 - j) as f64
    })
}

fn manifest(id: &str, data: &str, partition: &str) -> String {
    format!(
        r#"id = "{id}"
paper = "mine"
paper_file = "none"
title = "own data {id}"
reproduces = "nothing"
seed = 3

[data]
{data}

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

[profiles.quick]
"#
    )
}

const EVEN: &str = "scheme = \"even\"\nclients = 3";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn npy_file(path: &Path, a: &Array2<f64>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    a.write_npy(std::fs::File::create(path).unwrap()).unwrap();
}

fn csv_text(a: &Array2<f64>, header: bool, labels: Option<&[i64]>) -> String {
    let mut s = String::new();
    if header {
        let names: Vec<String> = (0..a.ncols()).map(|j| format!("f{j}")).collect();
        s += &names.join(",");
        if labels.is_some() {
            s += ",label";
        }
        s += "\n";
    }
    for (i, row) in a.rows().into_iter().enumerate() {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
        s += &cells.join(",");
        if let Some(l) = labels {
            s += &format!(",{}", l[i]);
        }
        s += "\n";
    }
    s
}

/// `dpca run exp/<id>.toml --profile quick` from `root` (the manifest lies in root/exp/).
fn run(root: &Path, id: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args([
            "run",
            &format!("exp/{id}.toml"),
            "--profile",
            "quick",
            "--threads",
            "1",
            "--results",
            "results",
            "--cache",
            "cache",
        ])
        .current_dir(root)
        .output()
        .unwrap()
}

fn ok(root: &Path, id: &str) {
    let out = run(root, id);
    assert!(
        out.status.success(),
        "{id}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn err(root: &Path, id: &str) -> String {
    let out = run(root, id);
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{id} should fail, printed: {text}");
    text
}

/// summary.csv without the columns that name the experiment or the run or time it.
fn summary(root: &Path, id: &str) -> Vec<Vec<String>> {
    let path = root.join(format!("results/mine/{id}/quick/summary.csv"));
    let mut r = csv::Reader::from_path(&path).unwrap();
    let head = r.headers().unwrap().clone();
    let keep: Vec<usize> = (0..head.len())
        .filter(|&k| !["experiment", "time_s", "run_id"].contains(&&head[k]))
        .collect();
    let mut rows = vec![keep.iter().map(|&k| head[k].to_string()).collect()];
    for rec in r.records() {
        let rec = rec.unwrap();
        rows.push(keep.iter().map(|&k| rec[k].to_string()).collect());
    }
    rows
}

#[test]
fn csv_npy_f32_and_both_orientations_give_the_same_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let x = samples();
    write(&root.join("exp/data/x.csv"), &csv_text(&x, true, None));
    npy_file(&root.join("exp/data/x.npy"), &x);
    // Features × samples, written in Fortran order.
    let xt = x.t().to_owned();
    let mut xf = Array2::<f64>::zeros(xt.raw_dim().f());
    xf.assign(&xt);
    npy_file(&root.join("exp/data/xt.npy"), &xf);
    std::fs::create_dir_all(root.join("exp/data")).unwrap();
    x.mapv(|v| v as f32)
        .write_npy(std::fs::File::create(root.join("exp/data/x32.npy")).unwrap())
        .unwrap();
    for (id, data) in [
        ("own_csv", "source = \"data/x.csv\""),
        ("own_npy", "source = \"data/x.npy\"\nn = 8\nm = 60"),
        (
            "own_npyt",
            "source = \"data/xt.npy\"\norientation = \"columns\"",
        ),
        ("own_npy32", "source = \"data/x32.npy\""),
    ] {
        write(
            &root.join(format!("exp/{id}.toml")),
            &manifest(id, data, EVEN),
        );
        ok(root, id);
    }
    let base = summary(root, "own_csv");
    assert_eq!(base.len(), 3, "{base:?}");
    for id in ["own_npy", "own_npyt", "own_npy32"] {
        assert_eq!(summary(root, id), base, "{id} differs from the CSV's runs");
    }
    let report =
        std::fs::read_to_string(root.join("results/mine/own_csv/quick/report.md")).unwrap();
    assert!(
        report.contains("file `data/x.csv` (csv, samples as rows"),
        "{report}"
    );
    assert!(report.contains("n = 8, m = 60"), "{report}");

    // Editing the file changes its digest: the stored runs are not reused.
    let run_ids = |root: &Path| {
        std::fs::read_to_string(root.join("results/mine/own_csv/quick/summary.csv")).unwrap()
    };
    let before = run_ids(root);
    let mut y = x.clone();
    y[[0, 0]] += 0.5;
    write(&root.join("exp/data/x.csv"), &csv_text(&y, true, None));
    ok(root, "own_csv");
    let after = run_ids(root);
    assert_ne!(before, after);
    let json = std::fs::read_to_string(root.join("results/mine/own_csv/quick/run.json")).unwrap();
    assert!(
        !json.contains(&root.display().to_string()),
        "run.json holds the absolute path"
    );
}

#[test]
fn libsvm_and_labelled_csv_split_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let x = samples();
    let labels: Vec<i64> = (0..60).map(|i| (i % 3) as i64).collect();
    // LIBSVM: 1-based indices, zeros left out, labels -1/+1.
    let mut text = String::new();
    for (i, row) in x.rows().into_iter().enumerate() {
        text += if i % 2 == 0 { "-1" } else { "+1" };
        for (j, v) in row.iter().enumerate() {
            if *v != 0.0 {
                text += &format!(" {}:{v:?}", j + 1);
            }
        }
        text += "\n";
    }
    write(&root.join("exp/data/x.libsvm"), &text);
    write(
        &root.join("exp/data/xl.csv"),
        &csv_text(&x, false, Some(&labels)),
    );
    let dirichlet = "scheme = \"dirichlet\"\nclients = 3\nalpha = 0.5";
    write(
        &root.join("exp/own_svm.toml"),
        &manifest("own_svm", "source = \"data/x.libsvm\"", dirichlet),
    );
    write(
        &root.join("exp/own_lab.toml"),
        &manifest(
            "own_lab",
            "source = \"data/xl.csv\"\nheader = false\nlabel_column = 9",
            dirichlet,
        ),
    );
    // A separate labels file for the .npy data, as text and as .npy.
    npy_file(&root.join("exp/data/x.npy"), &x);
    let lines: String = labels.iter().map(|l| format!("{l}\n")).collect();
    write(&root.join("exp/data/y.txt"), &lines);
    Array1::from(labels.clone())
        .write_npy(std::fs::File::create(root.join("exp/data/y.npy")).unwrap())
        .unwrap();
    write(
        &root.join("exp/own_ytxt.toml"),
        &manifest(
            "own_ytxt",
            "source = \"data/x.npy\"\nlabels = \"data/y.txt\"",
            dirichlet,
        ),
    );
    write(
        &root.join("exp/own_ynpy.toml"),
        &manifest(
            "own_ynpy",
            "source = \"data/x.npy\"\nlabels = \"data/y.npy\"",
            dirichlet,
        ),
    );
    for id in ["own_svm", "own_lab", "own_ytxt", "own_ynpy"] {
        ok(root, id);
    }
    // The same matrix and labels from a label column or a labels file: the same split, the
    // same runs.
    assert_eq!(summary(root, "own_ytxt"), summary(root, "own_lab"));
    assert_eq!(summary(root, "own_ynpy"), summary(root, "own_lab"));
    assert_eq!(summary(root, "own_svm").len(), 3);
}

#[test]
fn wrong_checksum_n_or_labels_count_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let x = samples();
    write(&root.join("exp/data/x.csv"), &csv_text(&x, true, None));
    let wrong = "0".repeat(64);
    let cases: Vec<(&str, String, Vec<String>)> = vec![
        (
            "bad_sha",
            format!("source = \"data/x.csv\"\nsha256 = \"{wrong}\""),
            vec![
                "x.csv".into(),
                wrong.clone(),
                "SHA-256 mismatch".into(),
                "key `data.sha256`".into(),
            ],
        ),
        (
            "bad_n",
            "source = \"data/x.csv\"\nn = 9".into(),
            vec!["x.csv".into(), "data.n = 9".into(), "8 features".into()],
        ),
        (
            "bad_m",
            "source = \"data/x.csv\"\nm = 50".into(),
            vec!["x.csv".into(), "data.m = 50".into(), "60 samples".into()],
        ),
        (
            "bad_labels",
            "source = \"data/x.csv\"\nlabels = \"data/y.txt\"".into(),
            vec!["y.txt".into(), "59 labels".into(), "60 samples".into()],
        ),
        (
            "missing",
            "source = \"data/nope.npy\"".into(),
            vec!["nope.npy".into(), "key `data.source`".into()],
        ),
        (
            "no_format",
            "source = \"data/x.dat\"".into(),
            vec!["x.dat".into(), "format".into()],
        ),
        (
            "unlabelled",
            "source = \"data/x.csv\"".into(),
            vec!["dirichlet".into(), "label_column".into()],
        ),
    ];
    let lines: String = (0..59).map(|i| format!("{}\n", i % 2)).collect();
    write(&root.join("exp/data/y.txt"), &lines);
    write(&root.join("exp/data/x.dat"), "1,2\n");
    for (id, data, needles) in cases {
        let partition = if id == "unlabelled" {
            "scheme = \"dirichlet\"\nclients = 3\nalpha = 1.0"
        } else {
            EVEN
        };
        write(
            &root.join(format!("exp/{id}.toml")),
            &manifest(id, &data, partition),
        );
        let e = err(root, id);
        assert!(e.contains(&format!("{id}.toml:")), "{id}: {e}");
        for n in needles {
            assert!(e.contains(&n), "{id}: no {n:?} in: {e}");
        }
    }
    // Checked digests are accepted, in upper case too.
    let digest = dpca_bench::data::fetch::sha256_file(&root.join("exp/data/x.csv")).unwrap();
    write(
        &root.join("exp/good_sha.toml"),
        &manifest(
            "good_sha",
            &format!(
                "source = \"data/x.csv\"\nsha256 = \"{}\"",
                digest.to_uppercase()
            ),
            EVEN,
        ),
    );
    ok(root, "good_sha");
}

/// The .npy reader's header checks, on files written by ndarray-npy and then damaged.
#[test]
fn npy_headers_are_checked_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let x = samples();
    npy_file(&path, &x);
    assert_eq!(npy::read_matrix(&path).unwrap(), x);
    let good = std::fs::read(&path).unwrap();
    let header_end = 10 + u16::from_le_bytes([good[8], good[9]]) as usize;
    let text = String::from_utf8_lossy(&good[10..header_end]).to_string();

    let expect = |bytes: &[u8], needles: &[&str]| {
        std::fs::write(&path, bytes).unwrap();
        let e = format!("{:#}", npy::read_matrix(&path).unwrap_err());
        assert!(e.contains(&path.display().to_string()), "{e}");
        for n in needles {
            assert!(e.contains(n), "no {n:?} in: {e}");
        }
    };
    // Truncated data, and bytes after it.
    expect(&good[..good.len() - 3], &["truncated", "3837 follow"]);
    let mut longer = good.clone();
    longer.extend([0u8; 5]);
    expect(&longer, &["5 unexpected bytes"]);
    // Bad magic, version, header length.
    let mut b = good.clone();
    b[1] = b'X';
    expect(&b, &["byte offset 0", "not a .npy file"]);
    let mut b = good.clone();
    b[6] = 7;
    expect(&b, &["byte offset 6", "version 7.0"]);
    let mut b = good.clone();
    b[8] = 0xff;
    b[9] = 0xff;
    expect(&b, &["truncated", "byte offset 8"]);
    expect(&good[..7], &["truncated at byte offset 7"]);
    // A shape whose product overflows, one the file cannot hold, and a non-numeric dtype: the
    // header is rewritten with the same length.
    let with = |from: &str, to: &str| {
        let t = text.replacen(from, to, 1);
        let t = format!("{:width$}", t.trim_end(), width = text.len() - 1) + "\n";
        assert_eq!(t.len(), text.len());
        let mut b = good[..10].to_vec();
        b.extend(t.as_bytes());
        b.extend(&good[header_end..]);
        b
    };
    expect(
        &with("(60, 8)", "(4294967296, 4294967296)"),
        &["shape", "overflows"],
    );
    expect(&with("(60, 8)", "(6000000, 8000)"), &["shape", "truncated"]);
    expect(&with("'<f8'", "'<U8'"), &["descr", "'<U8'", "float64"]);
    expect(&with("'<f8'", "'|O8'"), &["descr"]);
    expect(&with("(60, 8)", "(480,)"), &["shape", "2-D"]);
    // Integers are labels, not data.
    let ints: Array2<i64> = Array2::from_shape_fn((3, 2), |(i, j)| (i + j) as i64);
    ints.write_npy(std::fs::File::create(&path).unwrap())
        .unwrap();
    let e = format!("{:#}", npy::read_matrix(&path).unwrap_err());
    assert!(e.contains("'<i8' is not supported"), "{e}");
}

/// A minimal manifest: id, data, partition, problem and methods only. It runs under its one
/// profile `default` (never in a folder "paper"), and its report has no paper table.
#[test]
fn minimal_manifest_runs_with_defaults_and_a_plain_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    npy_file(&root.join("study/x.npy"), &samples());
    let text = "id = \"mini\"\n\n[data]\nsource = \"x.npy\"\n\n[partition]\n\
                scheme = \"iid\"\nclients = 2\n\n[problem]\np = 2\n\n[[methods]]\nname = \"ssi\"\n";
    write(&root.join("study/mini.toml"), text);

    let exp = dpca_bench::plan::load(&root.join("study/mini.toml"), "default").unwrap();
    assert_eq!(
        (
            exp.paper.as_str(),
            exp.title.as_str(),
            exp.seed,
            exp.profile.as_str()
        ),
        ("study", "mini", 0, "default")
    );
    assert!(!exp.has_paper());
    assert_eq!(exp.stop.max_rounds, 1000);

    let dpca = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
    };
    let out = dpca(&[
        "run",
        "study/mini.toml",
        "--results",
        "results",
        "--cache",
        "cache",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = root.join("results/study/mini/default");
    let report = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(report.contains("## Results\n"), "{report}");
    for absent in ["Paper beside ours", "Reproduces", "(paper)", "scaled-down"] {
        assert!(!report.contains(absent), "{absent:?} in: {report}");
    }
    // Without [[plots]], the family's default figures: its first metric against rounds and bytes.
    for stem in ["convergence_kkt", "communication_kkt"] {
        assert!(folder.join(format!("{stem}.svg")).is_file(), "{stem}.svg");
        assert!(
            report.contains(&format!("({stem}.png)")),
            "{stem} in: {report}"
        );
    }
    assert!(!root.join("results/study/mini/paper").exists());
    // Re-rendering finds the same profile without being told.
    let out = dpca(&["render", "results/study/mini/default"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A profile it does not have is an error naming the one it has.
    let out = dpca(&[
        "run",
        "study/mini.toml",
        "--profile",
        "paper",
        "--results",
        "results",
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("unknown profile `paper`") && e.contains("`default`"),
        "{e}"
    );
}

/// An IDX file (60 images of 2×4 unsigned bytes) and a gzip-compressed CSV of the same matrix
/// give the same runs; IDX's format is told by MNIST-style names.
#[test]
fn idx_and_gzip_csv_give_the_same_runs() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let x = samples().mapv(|v| (v * 8.0).abs().round().min(255.0));
    let mut idx = vec![0u8, 0, 8, 3];
    for d in [60u32, 2, 4] {
        idx.extend(d.to_be_bytes());
    }
    idx.extend(x.iter().map(|&v| v as u8));
    std::fs::create_dir_all(root.join("exp/data")).unwrap();
    std::fs::write(root.join("exp/data/train-images-idx3-ubyte"), &idx).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(csv_text(&x, false, None).as_bytes()).unwrap();
    std::fs::write(root.join("exp/data/x.csv.gz"), gz.finish().unwrap()).unwrap();
    for (id, data) in [
        ("own_idx", "source = \"data/train-images-idx3-ubyte\""),
        ("own_gz", "source = \"data/x.csv.gz\"\nheader = false"),
    ] {
        write(
            &root.join(format!("exp/{id}.toml")),
            &manifest(id, data, EVEN),
        );
        ok(root, id);
    }
    assert_eq!(summary(root, "own_idx"), summary(root, "own_gz"));
}

/// Exit-0 class. Degenerate data is refused at load by every family with the reason (it used to
/// end a subspace run "diverged" with exit 0 while the eigvec family refused it): an all-zero
/// file, or constant features that `center` turns to zero. A method that cannot start on
/// data that is not degenerate (DSI: machine 1 has no eigengap) ends "failed" with its message
/// while the experiment's other runs go on. No panic.
#[test]
fn exit0_degenerate_data_is_refused_at_load_by_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    npy_file(&root.join("exp/zeros.npy"), &Array2::zeros((60, 8)));
    let data = "source = \"zeros.npy\"";
    write(
        &root.join("exp/zero_sub.toml"),
        &manifest("zero_sub", data, EVEN),
    );
    let text = err(root, "zero_sub");
    assert!(
        text.contains("every entry is 0") && text.contains("key `data.source`"),
        "{text}"
    );
    npy_file(
        &root.join("exp/flat.npy"),
        &Array2::from_shape_fn((60, 8), |(_, j)| j as f64),
    );
    let flat = "source = \"flat.npy\"\npreprocess = [\"center\"]";
    write(&root.join("exp/flat.toml"), &manifest("flat", flat, EVEN));
    let text = err(root, "flat");
    assert!(text.contains("every feature is constant"), "{text}");

    // The eigvec family refuses zero data outright (no leading eigenvector). DSI needs machine
    // 1's local eigengap: give machine 1 (the first 20 samples of an even split) ±e₁ and ±e₂
    // five times each (local covariance diag(½, ½, 0, …): a repeated top eigenvalue), the
    // others ± rows of `samples()` (the data's mean stays 0, so centring changes nothing).
    write(
        &root.join("exp/zero_eig0.toml"),
        &manifest("zero_eig0", data, EVEN)
            .replace("[problem]\np = 2", "[problem]\nkind = \"eigvec\"\np = 1"),
    );
    let text = err(root, "zero_eig0");
    assert!(text.contains("zero"), "{text}");
    let base = samples();
    let tied = Array2::from_shape_fn((60, 8), |(i, j)| match i {
        0..20 => {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            if j == (i / 2) % 2 {
                sign
            } else {
                0.0
            }
        }
        20..40 => base[(i, j)],
        _ => -base[(i - 20, j)],
    });
    npy_file(&root.join("exp/tied.npy"), &tied);
    let eig = manifest("zero_eig", "source = \"tied.npy\"", EVEN)
        .replace("[problem]\np = 2", "[problem]\nkind = \"eigvec\"\np = 1")
        .replace("name = \"faps\"", "name = \"dsi\"");
    write(&root.join("exp/zero_eig.toml"), &eig);
    ok(root, "zero_eig");
    let runs = summary(root, "zero_eig");
    let (stop, method) = (
        runs[0].iter().position(|h| h == "stop_reason").unwrap(),
        runs[0].iter().position(|h| h == "method").unwrap(),
    );
    let dsi = runs[1..]
        .iter()
        .find(|r| r[method] == "dsi")
        .expect("a DSI row");
    assert_eq!(dsi[stop], "failed");
    let report =
        std::fs::read_to_string(root.join("results/mine/zero_eig/quick/report.md")).unwrap();
    assert!(report.contains("1 run(s) failed"), "{report}");
    assert!(report.contains("could not start"), "{report}");
    let json = std::fs::read_to_string(root.join("results/mine/zero_eig/quick/run.json")).unwrap();
    assert!(json.contains("\"error\""), "{json}");

    let sparse = manifest("zero_sparse", data, EVEN)
        .replace(
            "[problem]\np = 2",
            "[problem]\nkind = \"sparse\"\np = 2\nmu = 0.01",
        )
        .replace("name = \"ssi\"", "name = \"dssal1\"")
        .replace("name = \"faps\"", "name = \"manpg\"");
    write(&root.join("exp/zero_sparse.toml"), &sparse);
    let text = err(root, "zero_sparse");
    assert!(text.contains("every entry is 0"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// A sparse LIBSVM file too large to centre densely (9000 features × 30,000 samples: 2.7e8
/// entries, above the eigvec family's 2^28; its dense form, 2 GiB, is never made): the family
/// centres it implicitly and computes its reference by block Krylov (D > 8192), and CEDRE and RGD run on it from the warm start; CEDRE reaches log error
/// −25 (two planted "topics" give the covariance a clear eigengap).
#[test]
fn a_large_sparse_file_runs_the_eigvec_family_centred_implicitly() {
    let root = tempfile::tempdir().unwrap();
    let (d, m) = (9000usize, 30_000usize);
    // A fixed linear congruential stream: the file is the same on every machine.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..m {
        let mut row = std::collections::BTreeMap::new();
        for _ in 0..8 {
            // Feature i with probability ∝ 1/(i + 20), roughly (inverse of the log CDF).
            let i =
                ((20.0 * ((d as f64 / 20.0 + 1.0).ln() * next()).exp()) as usize - 20).min(d - 1);
            row.insert(i, 0.1 + 0.9 * next());
        }
        if next() < 0.3 {
            for t in 0..10 {
                *row.entry(100 + t).or_insert(0.0) += 1.0 + 0.1 * t as f64;
            }
        }
        if next() < 0.2 {
            for t in 0..10 {
                *row.entry(200 + t).or_insert(0.0) += 0.8;
            }
        }
        text += "1";
        for (i, v) in row {
            text += &format!(" {}:{v:.6}", i + 1);
        }
        text += "\n";
    }
    write(&root.path().join("exp/big.svm"), &text);
    let man = format!(
        r#"id = "bigsparse"
paper = "mine"
paper_file = "none"
title = "a large sparse file"
reproduces = "nothing"
seed = 3

[data]
source = "big.svm"
n = {d}
m = {m}

[partition]
scheme = "even"
clients = 10

[problem]
kind = "eigvec"
p = 1

[stop]
max_rounds = 12
target = {{ metric = "log_err", value = -25.0 }}

[[methods]]
name = "cedre"

[[methods]]
name = "rgd"

[profiles.quick]
"#
    );
    write(&root.path().join("exp/bigsparse.toml"), &man);
    ok(root.path(), "bigsparse");
    let dir = root.path().join("results/mine/bigsparse/quick");
    let json = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(json.contains("block Krylov"), "reference: {json}");
    let rows = summary(root.path(), "bigsparse");
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (method, log_err) = (col("method"), col("log_err"));
    let cedre = rows.iter().find(|r| r[method] == "cedre").unwrap();
    let err: f64 = cedre[log_err].parse().unwrap();
    assert!(err <= -25.0, "CEDRE's log error {err}");
    let rgd = rows.iter().find(|r| r[method] == "rgd").unwrap();
    assert!(rgd[log_err].parse::<f64>().unwrap().is_finite());
}

/// Hang class: a labels "file" that is a device or a FIFO would block the manifest's load (and
/// with it render, report and every MPI rank); it is refused by its kind, not read.
#[test]
fn hang_labels_that_are_not_regular_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("exp/data/x.csv"),
        &csv_text(&samples(), true, None),
    );
    std::os::unix::fs::symlink("/dev/zero", root.join("exp/data/zero")).unwrap();
    let fifo = root.join("exp/data/fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let mut names = vec!["zero"];
    if made.is_ok_and(|s| s.success()) {
        names.push("fifo");
    }
    for name in names {
        let id = format!("labels_{name}");
        let data = format!("source = \"data/x.csv\"\nlabels = \"data/{name}\"");
        write(
            &root.join(format!("exp/{id}.toml")),
            &manifest(&id, &data, EVEN),
        );
        let e = err(root, &id);
        for needle in [name, "not a regular file", "key `data.labels`"] {
            assert!(e.contains(needle), "{id}: no {needle:?} in: {e}");
        }
    }
}

/// Escape class: a labels line that is not an integer is named by its line, quoted short and
/// escaped (a file that is not a labels file, say one holding a key, is not echoed whole, and
/// no terminal escape reaches the terminal), under the key `data.labels`. A byte-order mark
/// before the first label is not part of it.
#[test]
fn escape_a_bad_labels_line_is_quoted_short_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("exp/data/x.csv"),
        &csv_text(&samples(), true, None),
    );
    let mut lines: Vec<String> = (0..60).map(|i| (i % 2).to_string()).collect();
    lines[0] = format!("\u{feff}{}", lines[0]);
    write(&root.join("exp/data/bom.txt"), &(lines.join("\n") + "\n"));
    let data = "source = \"data/x.csv\"\nlabels = \"data/bom.txt\"";
    write(&root.join("exp/bom.toml"), &manifest("bom", data, EVEN));
    ok(root, "bom");

    lines[1] = format!("\u{1b}[31mAPI_TOKEN={}SECRET", "0123456789abcdef".repeat(3));
    write(&root.join("exp/data/y.txt"), &(lines.join("\n") + "\n"));
    let data = "source = \"data/x.csv\"\nlabels = \"data/y.txt\"";
    write(&root.join("exp/bad.toml"), &manifest("bad", data, EVEN));
    let e = err(root, "bad");
    for needle in [
        "y.txt",
        "line 2",
        "key `data.labels`",
        "\\u{1b}",
        "not an integer label",
    ] {
        assert!(e.contains(needle), "no {needle:?} in: {e}");
    }
    assert!(!e.contains('\u{1b}') && !e.contains("SECRET"), "{e}");
}

/// Exit-0 class: p beyond the samples of one's own data is refused at load (m samples span at
/// most m directions), not run to a meaningless reference.
#[test]
fn exit0_p_beyond_the_samples_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let few = samples().slice(ndarray::s![..1, ..]).to_owned();
    write(&root.join("exp/data/x.csv"), &csv_text(&few, true, None));
    let data = "source = \"data/x.csv\"";
    write(
        &root.join("exp/wide.toml"),
        &manifest("wide", data, "scheme = \"even\"\nclients = 1"),
    );
    let e = err(root, "wide");
    for needle in ["problem.p = 2", "data.m = 1", "p must be <= m"] {
        assert!(e.contains(needle), "no {needle:?} in: {e}");
    }
}

/// Exit-0 class: `render` of results whose data file has changed since they were computed is
/// refused (it used to stamp the new file's sha256 into the old results' provenance).
#[test]
fn exit0_render_refuses_results_of_a_changed_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    npy_file(&root.join("exp/x.npy"), &samples());
    write(
        &root.join("exp/moved.toml"),
        &manifest("moved", "source = \"x.npy\"", EVEN),
    );
    ok(root, "moved");
    let render = || {
        Command::new(env!("CARGO_BIN_EXE_dpca"))
            .args(["render", "results/mine/moved/quick"])
            .current_dir(root)
            .output()
            .unwrap()
    };
    assert!(render().status.success());
    npy_file(&root.join("exp/x.npy"), &(samples() * 2.0));
    let out = render();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("differs from what these results were computed on"),
        "{text}"
    );
}

/// Exit-0 class: data of numerical rank below p is refused before any run, with exit 2, by every
/// family with a p-dimensional reference, under one rule (`problem::check_rank`: the reference
/// matrix's p-th eigenvalue at or below 1e-12·λ₁), naming `problem.p`, the file and the rank
/// (a rank-2 file at p = 5 used to run: SSI reached KKT 3e-16 and exit 0 on an arbitrary
/// subspace). Subspace (AAᵀ) and sparse (XXᵀ, PCA's loadings behind recon_ratio) on a rank-2
/// file; subspace on 3 samples centred (rank 2) at p = 3 = m; eigvec (p = 1, the centred
/// covariance) on constant features, which it centres itself. The same file at p = 2 runs. The
/// robust family takes no own data, and its p bounds the rank from above (docs/own-data.md).
#[test]
fn exit0_rank_below_p_is_refused_by_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let s = samples();
    let rank2 = Array2::from_shape_fn((60, 8), |(i, j)| {
        s[(i, 0)] * (j as f64 + 1.0) + s[(i, 1)] * (8.0 - j as f64).powi(2) / 8.0
    });
    npy_file(&root.join("exp/rank2.npy"), &rank2);
    let data = "source = \"rank2.npy\"";
    let refused = |id: &str, body: String, needle: &str| {
        write(&root.join(format!("exp/{id}.toml")), &body);
        let out = run(root, id);
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{id}: {text}");
        for n in [needle, "key `problem.p`", &format!("exp/{id}.toml")] {
            assert!(text.contains(n), "{id}: no {n:?} in: {text}");
        }
        assert!(!text.contains("panicked"), "{text}");
        // Refused before any run: not even the folder (or its .lock) is left.
        let folder = root.join(format!("results/mine/{id}"));
        assert!(!folder.exists(), "{id} left {}", folder.display());
        text
    };
    let sub = manifest("rank_sub", data, EVEN).replace("[problem]\np = 2", "[problem]\np = 5");
    let text = refused("rank_sub", sub, "numerical rank 2 < p = 5");
    assert!(
        text.contains("rank2.npy") && text.contains("lower p to at most 2"),
        "{text}"
    );
    write(
        &root.join("exp/rank_ok.toml"),
        &manifest("rank_ok", data, EVEN),
    );
    ok(root, "rank_ok");

    let sparse = manifest("rank_sparse", data, EVEN)
        .replace(
            "[problem]\np = 2",
            "[problem]\nkind = \"sparse\"\np = 3\nmu = 0.01",
        )
        .replace("name = \"ssi\"", "name = \"dssal1\"")
        .replace("name = \"faps\"", "name = \"manpg\"");
    refused("rank_sparse", sparse, "numerical rank 2 < p = 3");

    let three = samples().slice(ndarray::s![..3, ..]).to_owned();
    npy_file(&root.join("exp/three.npy"), &three);
    let centred = manifest(
        "rank_centred",
        "source = \"three.npy\"\npreprocess = [\"center\"]",
        "scheme = \"even\"\nclients = 1",
    )
    .replace("[problem]\np = 2", "[problem]\np = 3");
    refused("rank_centred", centred, "numerical rank 2 < p = 3");

    npy_file(
        &root.join("exp/flat.npy"),
        &Array2::from_shape_fn((60, 8), |(_, j)| j as f64),
    );
    let eig = manifest("rank_eig", "source = \"flat.npy\"", EVEN)
        .replace("[problem]\np = 2", "[problem]\nkind = \"eigvec\"\np = 1");
    refused("rank_eig", eig, "numerical rank 0 < p = 1");
}
