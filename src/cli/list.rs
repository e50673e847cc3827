//! `dpca list`: every manifest, then every method.

use anyhow::Result;
use dpca_bench::methods::registry;
use dpca_bench::{plan, spec};
use std::path::Path;

use super::common::manifests_under;

pub fn list(dir: &Path) -> Result<()> {
    for path in manifests_under(dir)? {
        match spec::profile_names(&path).and_then(|profiles| {
            let first = profiles.first().cloned().unwrap_or_default();
            plan::load(&path, &first).map(|e| (e, profiles))
        }) {
            Ok((e, profiles)) => println!(
                "{}/{}  [{}]  {}\n    {}{}",
                e.paper,
                e.id,
                profiles.join(", "),
                path.display(),
                e.title,
                if e.reproduces.is_empty() {
                    String::new()
                } else {
                    format!(" — reproduces {}", e.reproduces)
                }
            ),
            Err(err) => println!("(invalid) {}: {err}", path.display()),
        }
    }
    println!("\nmethods:");
    for m in registry::METHODS {
        let central = if m.centralised { ", centralised" } else { "" };
        println!(
            "  {:<12} [{}{central}] {} ({})",
            m.name, m.family, m.about, m.paper
        );
    }
    for (name, why) in registry::PLANNED {
        println!("  {name:<12} not implemented yet: {why}");
    }
    Ok(())
}
