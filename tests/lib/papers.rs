//! The paper registry (papers/*.toml): its errors name the file, the line and the key, as a
//! manifest's do; manifests must agree with it; and the repository's scorecard drops no stated
//! number and no claim of any committed results folder.

use dpca_bench::plan;
use dpca_bench::report::reload::{folders, load_folder};
use dpca_bench::report::scorecard::{RowKind, Scorecard, UNTESTED};
use dpca_bench::spec::ManifestError;
use std::path::{Path, PathBuf};

const PAPER: &str = r#"[paper]
key = "toy"
file = "toy.txt"
title = "Toy"
authors = ["A. Author"]
venue = "Venue"
year = 2024

[[claims]]
id = "fast"
where = "Fig. 1"
text = "fast"

[[claims]]
id = "gone"
where = "Fig. 2"
text = "on absent data"
untestable = "the data set is not public"
"#;

const MANIFEST: &str = r#"id = "m"
paper = "toy"
paper_file = "toy.txt"
seed = 1

[data]
generator = "svd"
spectrum = "geometric"
n = 20
m = 60
xi = 1.2

[partition]
scheme = "even"
clients = 3

[problem]
p = 2

[[methods]]
name = "ssi"

[[claims]]
id = "fast"
text = "t"
quantity = "rounds"
method = "ssi"
at_most = 10
"#;

/// A project folder with papers/toy.toml and experiments/toy/m.toml as given.
fn project(paper: &str, manifest: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("papers")).unwrap();
    std::fs::create_dir_all(tmp.path().join("experiments/toy")).unwrap();
    std::fs::write(tmp.path().join("papers/toy.toml"), paper).unwrap();
    let m = tmp.path().join("experiments/toy/m.toml");
    std::fs::write(&m, manifest).unwrap();
    (tmp, m)
}

/// The 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

fn load_err(paper: &str, manifest: &str) -> (ManifestError, tempfile::TempDir) {
    let (tmp, m) = project(paper, manifest);
    let e = plan::load(&m, "default").unwrap_err();
    (e, tmp)
}

#[test]
fn a_manifest_of_the_registry_loads_with_its_record() {
    let (_tmp, m) = project(PAPER, MANIFEST);
    let exp = plan::load(&m, "default").unwrap();
    let r = exp.paper_record.unwrap();
    assert_eq!(
        (r.key.as_str(), r.title.as_str(), r.year),
        ("toy", "Toy", Some(2024))
    );
}

#[test]
fn manifest_errors_name_file_line_and_key() {
    // An unknown paper.
    let text = MANIFEST.replace("paper = \"toy\"", "paper = \"nope\"");
    let (e, _t) = load_err(PAPER, &text);
    assert!(e.file().ends_with("experiments/toy/m.toml"), "{e}");
    assert_eq!(
        (e.key(), e.line()),
        (Some("paper"), Some(line_of(&text, "paper ="))),
        "{e}"
    );
    assert!(
        e.message().contains("not in the paper registry") && e.message().contains("`toy`"),
        "{e}"
    );
    // The wrong text.
    let text = MANIFEST.replace("paper_file = \"toy.txt\"", "paper_file = \"other.txt\"");
    let (e, _t) = load_err(PAPER, &text);
    assert_eq!(
        (e.key(), e.line()),
        (Some("paper_file"), Some(line_of(&text, "paper_file"))),
        "{e}"
    );
    assert!(e.message().contains("set paper_file = \"toy.txt\""), "{e}");
    // A claim id the inventory does not have.
    let text = MANIFEST.replace("id = \"fast\"", "id = \"quick\"");
    let (e, _t) = load_err(PAPER, &text);
    assert_eq!(
        (e.key(), e.line()),
        (Some("claims[0].id"), Some(line_of(&text, "id = \"quick\""))),
        "{e}"
    );
    assert!(e.message().contains("`fast`, `gone`"), "{e}");
    // A test of a claim the inventory calls untestable.
    let text = MANIFEST.replace("id = \"fast\"", "id = \"gone\"");
    let (e, _t) = load_err(PAPER, &text);
    assert_eq!(e.key(), Some("claims[0].id"), "{e}");
    assert!(e.message().contains("untestable"), "{e}");
}

#[test]
fn registry_errors_name_file_line_and_key() {
    let cases: [(String, &str, &str); 6] = [
        (
            PAPER.replacen("id = \"gone\"", "id = \"fast\"", 1),
            "claims[1].id",
            "already claims[0]'s",
        ),
        (
            PAPER.replace("venue = ", "place = "),
            "paper.place",
            "unknown field",
        ),
        (
            PAPER.replace("key = \"toy\"", "key = \"other\""),
            "paper.key",
            "file name",
        ),
        (
            PAPER.replace("untestable = ", "study = \"toy/nothing\"\nuntestable = "),
            "claims[1].study",
            "not an experiment",
        ),
        (
            PAPER.replace("year = 2024", "year = \"2024\""),
            "paper.year",
            "invalid type",
        ),
        (
            PAPER.replace("title = \"Toy\"", "title = \"\""),
            "paper.title",
            "title",
        ),
    ];
    for (paper, key, says) in cases {
        let (e, _t) = load_err(&paper, MANIFEST);
        assert!(e.file().ends_with("papers/toy.toml"), "{key}: {e}");
        assert_eq!(e.key(), Some(key), "{e}");
        let last = key.rsplit('.').next().unwrap();
        let want = paper
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with(last))
            .map(|(i, _)| i + 1)
            .last();
        assert_eq!(e.line(), want, "{key}: {e}");
        assert!(e.message().contains(says), "{key}: {e}");
        assert!(
            e.to_string()
                .contains(&format!("papers/toy.toml:{}: key `{key}`", want.unwrap())),
            "{e}"
        );
    }
}

/// Without a registry above it, a manifest is checked against nothing (an own experiment).
#[test]
fn no_registry_no_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m.toml");
    std::fs::write(
        &m,
        MANIFEST.replace("paper_file = \"toy.txt\"", "paper_file = \"x.txt\""),
    )
    .unwrap();
    let exp = plan::load(&m, "default").unwrap();
    assert!(exp.paper_record.is_none());
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `[[paper_results]]` value and every `[[claims]]` entry of every committed results folder
/// of a registry paper has its row in the scorecard; no inventory claim is left untested.
#[test]
fn the_repository_scorecard_drops_nothing() {
    let root = repo().join("results");
    let loaded: Vec<_> = folders(&root)
        .unwrap()
        .iter()
        .map(|rel| load_folder(&root, rel).unwrap())
        .collect();
    let card = Scorecard::of_results(&root, &loaded)
        .unwrap()
        .expect("papers/");
    let reg = plan::registry_of(&root).unwrap().unwrap();
    let mut checked = 0;
    for f in &loaded {
        let exp = &f.exp;
        let Some(paper) = reg.get(&exp.paper) else {
            continue;
        };
        let rows: Vec<_> = card
            .rows_of(&exp.paper, &exp.profile)
            .filter(|r| r.experiment == exp.id)
            .collect();
        for (i, pr) in exp.paper_results.iter().enumerate() {
            let id = format!("paper_results[{i}]");
            let mut quantities: Vec<String> = pr.metrics.keys().cloned().collect();
            quantities.extend(pr.rounds.map(|_| "rounds".to_string()));
            quantities.extend(pr.time_s.map(|_| "time_s".to_string()));
            if quantities.is_empty() {
                quantities.push("note".into());
            }
            for q in quantities {
                assert!(
                    rows.iter()
                        .any(|r| r.kind == RowKind::Number && r.id == id && r.quantity == q),
                    "{}: {id} {q} has no row",
                    f.rel.display()
                );
                checked += 1;
            }
        }
        for (i, c) in exp.claims.iter().enumerate() {
            let id = c.id.clone().unwrap_or_else(|| format!("claims[{i}]"));
            assert!(
                rows.iter()
                    .any(|r| r.kind == RowKind::Test && r.id == id && r.text == c.text),
                "{}: claims[{i}] has no row",
                f.rel.display()
            );
            checked += 1;
            if let Some(id) = &c.id {
                assert!(paper.claim(id).is_some());
            }
        }
    }
    assert!(checked > 100, "only {checked} rows checked");
    let untested: Vec<String> = card
        .rows
        .iter()
        .filter(|r| r.kind == RowKind::Claim && r.profile == "paper" && r.verdict == UNTESTED)
        .map(|r| format!("{} {}", r.paper, r.id))
        .collect();
    assert!(
        untested.is_empty(),
        "inventory claims with no test and no reason: {untested:?}"
    );
    // Every inventory claim has its row.
    for p in &reg.papers {
        for c in &p.claims {
            assert!(card
                .rows_of(&p.record.key, "paper")
                .any(|r| r.kind == RowKind::Claim && r.id == c.id));
        }
    }
}
