//! `dpca methods [NAME]`: the registered methods, or one method's parameters.

use anyhow::Result;
use dpca_bench::methods::{params_doc, registry};
use dpca_bench::problem;
use dpca_bench::util::columns;

use super::common::UsageError;

/// `dpca methods`: one row per method, its paper on a second line under the about.
pub fn methods_table() -> String {
    let mut rows = vec![vec![
        "NAME".to_string(),
        "FAMILY".into(),
        "CENTRALISED".into(),
        "ABOUT / PAPER".into(),
    ]];
    for m in registry::METHODS {
        let central = if m.centralised { "yes" } else { "no" };
        rows.push(vec![
            m.name.into(),
            m.family.to_string(),
            central.into(),
            m.about.into(),
        ]);
        rows.push(vec![
            String::new(),
            String::new(),
            String::new(),
            m.paper.into(),
        ]);
    }
    let mut out = columns(&rows);
    for (name, why) in registry::PLANNED {
        out.push_str(&format!("{name}: not implemented yet: {why}\n"));
    }
    out.push_str(&family_stops());
    out.push_str(
        "\n`dpca methods NAME` lists a method's parameters, their defaults and meanings.\n",
    );
    out
}

/// Each family's stop rule for a manifest without [stop].
fn family_stops() -> String {
    let mut out = "\nStop rule of a manifest without [stop], per family:\n".to_string();
    for f in problem::FAMILIES {
        out.push_str(&format!(
            "  {:<9} {}\n",
            f.kind().as_str(),
            f.default_stop().describe()
        ));
    }
    out
}

/// `dpca methods NAME`: the method, then a table of its parameters.
pub fn method_params(name: &str) -> Result<()> {
    let m = registry::lookup(name)
        .or_else(|| {
            registry::METHODS
                .iter()
                .find(|e| e.name.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            let near = registry::closest(name);
            let hint = if near.is_empty() {
                "none is close".to_string()
            } else {
                format!("closest: {}", near.join(", "))
            };
            UsageError(format!(
                "unknown method `{name}` ({hint}); `dpca methods` lists them all"
            ))
        })?;
    let runs = if m.centralised {
        "centralised: runs on one client holding all the data, its rounds are iterations"
    } else {
        "distributed over the manifest's clients"
    };
    println!("{} — {}", m.name, m.about);
    println!("  family: {}; {runs}", m.family);
    println!("  paper:  {}", m.paper);
    println!(
        "  stop:   without [stop], the {} family's default: {}",
        m.family,
        problem::family(m.family).default_stop().describe()
    );
    let params = params_doc::params(m).map_err(anyhow::Error::msg)?;
    if params.is_empty() {
        println!("\nno parameters");
        return Ok(());
    }
    println!("\nparameters (set in a manifest's [[methods]] params = {{ ... }}; a list sweeps):");
    // A list value would sweep, so a list-valued parameter is written inside another list.
    if let Some(p) = params.iter().find(|p| p.ty.starts_with("list")) {
        println!(
            "(a list-valued one is wrapped in a list: {} = [[...]])",
            p.name
        );
    }
    println!();
    let mut rows = vec![vec![
        "NAME".to_string(),
        "TYPE".into(),
        "DEFAULT".into(),
        "MEANING".into(),
    ]];
    rows.extend(
        params
            .into_iter()
            .map(|p| vec![p.name, p.ty, p.default, p.meaning.to_string()]),
    );
    print!("{}", columns(&rows));
    Ok(())
}
