//! `dpca verify`: re-run committed results in a scratch folder and compare them.

use anyhow::Result;
use dpca_bench::data::prepare::DatasetAbsent;
use dpca_bench::progress::Progress;
use dpca_bench::report::{
    self,
    compare::{self, Tolerance},
};
use dpca_bench::run::Options;
use dpca_bench::util::columns;
use dpca_bench::{plan, spec};
use std::path::{Path, PathBuf};

use super::common::{manifests_under, run_manifest, UsageError};
use super::compare::{outcome_row, print_comparison, KERNELS_HEADER, OUTCOME_HEADER};

/// `dpca verify`: re-run every manifest with committed results of `profile` into the scratch
/// root `opts.results_root` and compare.
pub fn verify(
    targets: &[PathBuf],
    committed: &Path,
    profile: &str,
    opts: &Options,
    tol: Tolerance,
) -> Result<()> {
    // Every manifest to re-run, and whether it was named (then it must have results).
    let mut manifests = Vec::new();
    for t in targets {
        if t.is_dir() {
            manifests.extend(manifests_under(t)?.into_iter().map(|m| (m, false)));
        } else if t.is_file() {
            manifests.push((t.clone(), true));
        } else {
            return Err(UsageError(format!("{}: no such manifest or folder", t.display())).into());
        }
    }
    let progress = Progress::new();
    let mut header = OUTCOME_HEADER.map(String::from).to_vec();
    header.push(KERNELS_HEADER.into());
    let width = header.len();
    let mut rows = vec![header];
    let (mut checked, mut differing, mut skipped) = (0, 0, 0);
    for (path, named) in manifests {
        let has_profile = spec::profile_names(&path)?.iter().any(|p| p == profile);
        let exp = match has_profile {
            true => Some(plan::load(&path, profile)?),
            false => None,
        };
        // The results folder's path under the results root, when the profile has results.
        let rel = exp
            .map(|e| Path::new(&e.paper).join(&e.id).join(&e.profile))
            .filter(|rel| committed.join(rel).join("summary.csv").is_file());
        let Some(rel) = rel else {
            if named {
                return Err(UsageError(format!(
                    "{}: no committed results of profile `{profile}` under {}",
                    path.display(),
                    committed.display()
                ))
                .into());
            }
            continue;
        };
        let old = committed.join(&rel);
        let name = rel.display().to_string();
        let started = std::time::Instant::now();
        match run_manifest(&path, profile, &[], opts, &progress) {
            Ok(()) => {}
            Err(e) if e.chain().any(|c| c.is::<DatasetAbsent>()) => {
                progress.log(format!("skipped {name}: {e}"));
                let mut row = vec![name, "skipped: dataset absent".into()];
                row.resize(width, "—".into());
                rows.push(row);
                skipped += 1;
                continue;
            }
            Err(e) => return Err(e.context(format!("re-running {}", path.display()))),
        }
        let fresh = opts.results_root.join(&rel);
        let c = compare::compare_folders(&old, &fresh, tol)?;
        let kernels = kernels_line(&old, &fresh);
        progress.log(format!(
            "{name}: re-run in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        print_comparison(&name, &c, tol);
        println!("    kernels: {kernels}");
        checked += 1;
        differing += usize::from(!c.matches());
        let mut row = outcome_row(&name, &c);
        row.push(kernels);
        rows.push(row);
    }
    if checked + skipped == 0 {
        return Err(UsageError(format!(
            "no manifest in {} has committed results of profile `{profile}` in {}",
            targets
                .iter()
                .map(|t| t.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            committed.display()
        ))
        .into());
    }
    println!(
        "\n(A = committed in {}, B = re-run)\n{}",
        committed.display(),
        columns(&rows)
    );
    if differing > 0 {
        anyhow::bail!(
            "{differing} of {checked} re-run results folder(s) differ from the committed ones"
        );
    }
    println!(
        "{checked} results folder(s) reproduced{}",
        if skipped > 0 {
            format!(", {skipped} skipped (dataset absent)")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The kernels of the committed run (A) and the re-run (B), from their run.json files: "A = B"
/// when they give the same bits, else "A ≠ B (other kernels: other last bits)".
fn kernels_line(a: &Path, b: &Path) -> String {
    let read = |d: &Path| -> serde_json::Value {
        std::fs::read(d.join("run.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    };
    let (ra, rb) = (read(a), read(b));
    let (ka, kb) = (
        report::provenance::kernels(&ra),
        report::provenance::kernels(&rb),
    );
    match report::provenance::same_bits_kernels(&ra, &rb) {
        true if ka == kb => format!("{ka} = {kb}"),
        true => format!("{ka} ≡ {kb} (same bits)"),
        false => format!("{ka} ≠ {kb} (other kernels: other last bits)"),
    }
}
