//! `dpca methods [NAME]` through the binary: the table of every method, one method's
//! parameters with the defaults a run resolves, and unknown names.

use dpca_bench::methods::{params_doc, registry};
use std::process::{Command, Output};

fn dpca(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpca"))
        .args(args)
        .output()
        .expect("dpca runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "dpca failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn the_table_lists_every_method_with_family_and_centralisation() {
    let text = stdout(&dpca(&["methods"]));
    for m in registry::METHODS {
        let row = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(m.name))
            .unwrap_or_else(|| panic!("no row for {}:\n{text}", m.name));
        let cells: Vec<&str> = row.split_whitespace().collect();
        let central = if m.centralised { "yes" } else { "no" };
        assert_eq!(cells[1], m.family.to_string(), "{row}");
        assert_eq!(cells[2], central, "{row}");
        assert!(row.contains(m.about), "{row}");
        assert!(text.contains(m.paper), "{} paper missing", m.name);
    }
}

#[test]
fn one_method_lists_its_parameters_with_resolved_defaults() {
    let text = stdout(&dpca(&["methods", "faps"]));
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"))
            .to_string()
    };
    // Defaults as faps::Params::default() sets them, written as a manifest would.
    let inner = row("inner");
    assert!(inner.contains("\"rule\" | \"fixed\" | \"kkt\""), "{inner}");
    assert!(inner.contains("  \"fixed\"  "), "{inner}");
    assert!(row("beta0").contains("  0.15  "), "{}", row("beta0"));
    assert!(row("period").contains("integer ≥ 0"), "{}", row("period"));
    assert!(text.contains("FAPS paper, Algorithm 1"), "{text}");

    // Every method prints every parameter with its type, default and meaning.
    for m in registry::METHODS {
        let text = stdout(&dpca(&["methods", m.name]));
        let params = params_doc::params(m).expect("defaults pass the method's check");
        if params.is_empty() {
            assert!(text.contains("no parameters"), "{}: {text}", m.name);
        }
        for p in params {
            let line = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(p.name.as_str()))
                .unwrap_or_else(|| panic!("{}: no row for {}:\n{text}", m.name, p.name));
            for cell in [&p.ty, &p.default, &p.meaning.to_string()] {
                assert!(line.contains(cell.as_str()), "{}: {line}", m.name);
            }
        }
    }
    // A centralised method says so.
    assert!(stdout(&dpca(&["methods", "apgm"])).contains("centralised"));
}

#[test]
fn an_unknown_name_fails_and_suggests_the_nearest() {
    let out = dpca(&["methods", "fap"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown method `fap`"), "{err}");
    assert!(err.contains("closest: faps"), "{err}");
    let out = dpca(&["methods", "no-such-thing"]);
    assert_eq!(out.status.code(), Some(2));
    // Case is forgiven.
    assert!(stdout(&dpca(&["methods", "FAPS"])).starts_with("faps"));
}

#[test]
fn help_explains_the_subcommand() {
    let text = stdout(&dpca(&["methods", "--help"]));
    for needle in ["[NAME]", "default", "centralised", "dpca methods faps"] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
}
