//! The scorecard end to end on a crafted project (papers/, experiments/, results/ in a temporary
//! folder): `dpca run`, then `dpca report` writes results/scorecard.csv and the pages, and
//! `dpca scorecard` prints the totals. Each verdict is produced by a run made for it; the
//! registry's hostile text reaches no page or report unescaped.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

fn dpca(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Text that would be live markup, a link or emphasis if a page or report.md took it as it is.
const HOSTILE: &str = "<script>alert(1)</script> [x](javascript:alert(2)) *b* &amp; | `c`";

fn registry() -> String {
    format!(
        r#"[paper]
key = "toy"
file = "toy.txt"
title = "Toy {h}"
authors = ["A. {h}", "B. Author"]
venue = "Venue {h}"
year = 2024

[[claims]]
id = "fast"
where = "Fig. 1"
text = "FAPS stops within a million rounds {h}"

[[claims]]
id = "slow"
where = "Fig. 1"
text = "FAPS needs a single round"
cause = "measured: more rounds"
study = "toy/later"

[[claims]]
id = "absent"
where = "Fig. 2"
text = "something on data not here"
untestable = "the data set is not public"

[[claims]]
id = "later"
where = "Fig. 3"
text = "tested by an experiment not run"

[[claims]]
id = "orphan"
where = "Fig. 4"
text = "nobody tests this"
"#,
        h = HOSTILE.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

fn manifest(id: &str, max_rounds: usize, rest: &str) -> String {
    format!(
        r#"id = "{id}"
paper = "toy"
paper_file = "toy.txt"
title = "toy {id}"
reproduces = "nothing"
seed = 5

[data]
generator = "svd"
spectrum = "geometric"
n = 30
m = 600
xi = 1.2

[partition]
scheme = "even"
clients = 3

[problem]
p = 3

[stop]
max_rounds = {max_rounds}
objective_tol = 1e-10

[[methods]]
name = "ssi"
label = "SSI"

[[methods]]
name = "faps"
label = "FAPS"

[profiles.paper]
{rest}"#
    )
}

const CLAIMS: &str = r#"
[[claims]]
id = "fast"
text = "FAPS within a million rounds"
quantity = "rounds"
method = "FAPS"
at_most = 1e6

[[claims]]
id = "slow"
text = "FAPS in one round"
quantity = "rounds"
method = "FAPS"
at_most = 1

[[claims]]
text = "SSI takes at least one round"
quantity = "rounds"
method = "SSI"
at_least = 1
"#;

/// summary.csv's rows of a folder as maps.
fn summary(dir: &Path) -> Vec<HashMap<String, String>> {
    let mut rdr = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    rdr.records()
        .map(|r| {
            let r = r.unwrap();
            h.iter()
                .zip(r.iter())
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn verdicts_of_numbers_claims_and_tests_and_hostile_text_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("papers")).unwrap();
    std::fs::create_dir_all(d.join("experiments/toy")).unwrap();
    std::fs::write(d.join("papers/toy.toml"), registry()).unwrap();
    let e = d.join("experiments/toy/e.toml");
    std::fs::write(&e, manifest("e", 300, CLAIMS)).unwrap();
    // Capped at 3 rounds: every count a lower bound.
    std::fs::write(
        d.join("experiments/toy/capped.toml"),
        manifest("capped", 3, ""),
    )
    .unwrap();
    let later = "\n[[claims]]\nid = \"later\"\ntext = \"t\"\nquantity = \"rounds\"\nmethod = \"FAPS\"\nat_most = 1e6\n";
    std::fs::write(
        d.join("experiments/toy/later.toml"),
        manifest("later", 300, later),
    )
    .unwrap();
    for m in ["experiments/toy/e.toml", "experiments/toy/capped.toml"] {
        ok(&dpca(d, &["run", m, "--cache", "cache", "--threads", "1"]));
    }
    // The paper's numbers, set beside the runs just made (they change no run).
    let rows = summary(&d.join("results/toy/e/paper"));
    let faps = rows.iter().find(|r| r["method"] == "FAPS").unwrap();
    let rounds: f64 = faps["rounds"].parse().unwrap();
    let kkt: f64 = faps["kkt"].parse().unwrap();
    let text = std::fs::read_to_string(&e).unwrap();
    std::fs::write(
        &e,
        format!(
            "{text}\n[[paper_results]]\nmethod = \"FAPS\"\nrounds = {}\nkkt = {:e}\ntime_s = 1.0\n\n\
             [[paper_results]]\nmethod = \"SSI\"\nnote = \"a note only\"\n",
            (rounds * 1.1).round() as u64,
            kkt * 10.0
        ),
    )
    .unwrap();
    let capped = d.join("experiments/toy/capped.toml");
    let text = std::fs::read_to_string(&capped).unwrap();
    std::fs::write(
        &capped,
        format!("{text}\n[[paper_results]]\nmethod = \"FAPS\"\nrounds = 2\n\n[[paper_results]]\nmethod = \"SSI\"\nrounds = 3\n"),
    )
    .unwrap();
    ok(&dpca(d, &["report"]));

    let mut rdr = csv::Reader::from_path(d.join("results/scorecard.csv")).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<HashMap<String, String>> = rdr
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    let find = |kind: &str, exp: &str, id: &str, q: &str| {
        rows.iter()
            .find(|r| {
                r["profile"] == "paper"
                    && r["kind"] == kind
                    && (exp.is_empty() || r["experiment"] == exp)
                    && r["id"] == id
                    && r["quantity"] == q
            })
            .unwrap_or_else(|| panic!("no {kind} row {exp} {id} {q}: {rows:#?}"))
    };
    // Numbers: ours is the run's, the ratio ours / paper.
    let r = find("number", "e", "paper_results[0]", "rounds");
    assert_eq!(r["verdict"], "within ±20 %");
    assert_eq!(r["ours"].parse::<f64>().unwrap(), rounds);
    let r = find("number", "e", "paper_results[0]", "kkt");
    assert_eq!(r["verdict"], "outside");
    assert!((r["ratio"].parse::<f64>().unwrap() - 0.1).abs() < 1e-9);
    assert_eq!(r["cause"], "unexplained");
    assert_eq!(
        find("number", "e", "paper_results[0]", "time_s")["verdict"],
        "time"
    );
    assert_eq!(
        find("number", "e", "paper_results[1]", "note")["verdict"],
        "note only"
    );
    let r = find("number", "capped", "paper_results[0]", "rounds");
    assert_eq!(
        (r["verdict"].as_str(), r["bound"].as_str()),
        ("lower bound", "already outside")
    );
    let r = find("number", "capped", "paper_results[1]", "rounds");
    assert_eq!(
        (r["verdict"].as_str(), r["bound"].as_str()),
        ("lower bound", "undecided")
    );
    // Claims of the inventory.
    let r = find("claim", "", "fast", "");
    assert_eq!(
        (r["verdict"].as_str(), r["experiment"].as_str()),
        ("held", "e")
    );
    let r = find("claim", "", "slow", "");
    assert_eq!(r["verdict"], "not held");
    assert!(r["evidence"].contains("e claims[1] fails"), "{r:?}");
    assert_eq!(
        (r["cause"].as_str(), r["study"].as_str()),
        ("measured: more rounds", "toy/later")
    );
    let r = find("claim", "", "absent", "");
    assert_eq!(
        (r["verdict"].as_str(), r["evidence"].as_str()),
        ("untestable", "the data set is not public")
    );
    let r = find("claim", "", "later", "");
    assert_eq!(r["verdict"], "untestable");
    assert!(r["evidence"].contains(": not run"), "{r:?}");
    assert_eq!(find("claim", "", "orphan", "")["verdict"], "untested");
    // Tests of the manifests, with and without an inventory id.
    assert_eq!(find("test", "e", "fast", "rounds")["verdict"], "holds");
    assert_eq!(find("test", "e", "slow", "rounds")["verdict"], "fails");
    assert_eq!(find("test", "e", "claims[2]", "rounds")["verdict"], "holds");
    assert_eq!(
        find("test", "later", "later", "rounds")["verdict"],
        "not run"
    );

    // Rendered again: the same bytes.
    let first = std::fs::read(d.join("results/scorecard.csv")).unwrap();
    let index = std::fs::read(d.join("results/index.html")).unwrap();
    ok(&dpca(d, &["report"]));
    assert_eq!(
        first,
        std::fs::read(d.join("results/scorecard.csv")).unwrap()
    );
    assert_eq!(index, std::fs::read(d.join("results/index.html")).unwrap());

    // The paper by name on every page, its text escaped; no live script or link.
    let pages = [
        "results/index.html",
        "results/toy/index.html",
        "results/toy/e/paper/index.html",
    ];
    for p in pages {
        let html = std::fs::read_to_string(d.join(p)).unwrap();
        assert!(
            html.contains("Toy &lt;script&gt;alert(1)&lt;/script&gt;"),
            "{p}: {html}"
        );
        assert!(!html.contains("<script>alert"), "{p}");
        assert!(
            !html.to_ascii_lowercase().contains("href=\"javascript"),
            "{p}"
        );
        assert!(
            !html.contains("<em>b</em>"),
            "{p}: Markdown emphasis from the registry"
        );
        // Links from the paper's page to its experiments resolve.
        if p == "results/toy/index.html" {
            assert!(
                html.contains("href=\"../toy/e/paper/index.html\""),
                "{html}"
            );
            assert!(d.join("results/toy/e/paper/index.html").is_file());
        }
    }
    let md = std::fs::read_to_string(d.join("results/toy/e/paper/report.md")).unwrap();
    assert!(md.contains("*Toy \\<script\\>alert(1)\\</script\\> \\[x\\](javascript:alert(2)) \\*b\\* \\&amp; \\| \\`c\\`*"), "{md}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("results/toy/e/paper/run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["paper_record"]["key"], "toy");
    assert_eq!(json["paper_record"]["authors"][1], "B. Author");

    // The totals as `dpca scorecard` prints them; an unknown paper is a usage error.
    let out = ok(&dpca(d, &["scorecard"]));
    let line = out.lines().find(|l| l.starts_with("toy ")).unwrap();
    let cells: Vec<&str> = line.split_whitespace().filter(|c| *c != "|").collect();
    // within, bound, outside, not run, time, total | held, not held, untestable, untested, total.
    assert_eq!(
        &cells[1..12],
        ["1", "2", "1", "0", "1", "5", "1", "1", "2", "1", "5"],
        "{out}"
    );
    let out = ok(&dpca(d, &["scorecard", "--paper", "toy"]));
    assert!(
        out.contains("claim  not held") && out.contains("slow"),
        "{out}"
    );
    let o = dpca(d, &["scorecard", "--paper", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected one of toy"));
}
