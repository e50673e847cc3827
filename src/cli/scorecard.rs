//! `dpca scorecard`: each paper's scorecard from the committed results, as text.

use anyhow::Result;
use dpca_bench::report::html::{load_all, unreadable};
use dpca_bench::report::scorecard::Scorecard;
use std::path::Path;

use super::common::UsageError;

/// A folder or manifest that cannot be read is left out, named at the end, and makes the exit
/// status non-zero, as `dpca report` does.
pub fn scorecard(results: &Path, paper: Option<&str>, profile: &str) -> Result<()> {
    let (loaded, mut errors) = load_all(results)?;
    let Some(card) = Scorecard::of_results(results, &loaded)? else {
        anyhow::bail!(
            "{}: no paper registry (a papers/ folder of papers/<key>.toml) in it or above it",
            results.display()
        );
    };
    if let Some(key) = paper {
        if !card.papers.iter().any(|p| p.key == key) {
            let keys: Vec<&str> = card.papers.iter().map(|p| p.key.as_str()).collect();
            return Err(UsageError(format!(
                "--paper {key}: not a paper of the registry: expected one of {}",
                keys.join(", ")
            ))
            .into());
        }
    }
    let known = card
        .papers
        .iter()
        .any(|p| card.profiles(&p.key).contains(&profile));
    if !known {
        return Err(UsageError(format!(
            "--profile {profile}: no results or manifests of this profile"
        ))
        .into());
    }
    println!("Scorecard, profile {profile} (numbers: stated values; claims: the inventory's)");
    print!("{}", card.totals_text(profile, paper));
    for p in &card.papers {
        if paper.is_some_and(|k| k != p.key) || !card.profiles(&p.key).contains(&profile) {
            continue;
        }
        println!("  {}: {} — {}", p.key, p.title, p.byline());
    }
    if let Some(key) = paper {
        println!();
        print!("{}", card.rows_text(key, profile));
    }
    errors.extend(card.errors.iter().cloned());
    unreadable(&errors)
}
