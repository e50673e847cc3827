//! run.json: where every number came from.

use crate::run::Outcome;
use crate::spec::Experiment;
use serde_json::{json, Value};
use std::process::Command;

/// The BLAS/LAPACK backend this binary was built with.
pub fn blas_backend() -> &'static str {
    if cfg!(feature = "mkl") {
        "Intel MKL (static, sequential, LP64)"
    } else {
        "OpenBLAS (Debian libopenblas, single-threaded per client)"
    }
}

/// The BLAS kernels in use, which decide the last bits of every product: the core type
/// OpenBLAS runs (chosen for this CPU, or by OPENBLAS_CORETYPE, which `dpca` sets to Haswell
/// unless told otherwise: src/linalg/blas_pin.rs), or "mkl, MKL_CBWR=<mode>" (MKL_CBWR pins
/// MKL's code path).
#[cfg(feature = "mkl")]
pub fn blas_core() -> Option<String> {
    let mode = std::env::var(crate::linalg::blas_pin::MKL_ENV).unwrap_or_else(|_| "unset".into());
    Some(format!("mkl, {}={mode}", crate::linalg::blas_pin::MKL_ENV))
}

#[cfg(all(feature = "openblas", not(feature = "mkl")))]
pub fn blas_core() -> Option<String> {
    extern "C" {
        fn openblas_get_corename() -> *const std::os::raw::c_char;
    }
    // SAFETY: libopenblas returns a pointer to a static NUL-terminated string (or null).
    let name = unsafe { openblas_get_corename() };
    if name.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated and static, as above.
    let name = unsafe { std::ffi::CStr::from_ptr(name) };
    Some(name.to_string_lossy().trim().to_string())
}

#[cfg(not(any(feature = "openblas", feature = "mkl")))]
pub fn blas_core() -> Option<String> {
    None
}

/// What decided the last bits of an outcome's numbers, for its report, read from its run.json
/// ([`run_json`]: the computing run's values when re-rendered, else this process's).
pub fn computed_with(run: &Value) -> String {
    let core = run["blas_core"]
        .as_str()
        .map_or("kernels not recorded".into(), |c| format!("{c} kernels"));
    let products = match run["product_kernel"].as_str() {
        Some("avx512") => "the AVX-512 kernels of src/linalg/avx512.rs",
        Some("avx2") => "the AVX2 kernels of src/linalg/avx2.rs (the AVX-512 kernels' bits)",
        Some("blas") => "BLAS",
        _ => "not recorded",
    };
    let blas = run["blas"].as_str().unwrap_or("not recorded");
    format!("{blas}, {core}; dense products A_i(A_iᵀX): {products}")
}

/// The kernels that decided a run's last bits, from its run.json: "Haswell+avx512" (OpenBLAS
/// core + product kernel), "?" for what is not recorded.
pub fn kernels(run: &Value) -> String {
    let field = |k: &str| run[k].as_str().unwrap_or("?").to_string();
    format!("{}+{}", field("blas_core"), field("product_kernel"))
}

/// Whether two runs' kernels give the same bits: the same BLAS core and product kernels of
/// one family (avx512 and avx2 compute the same operations in the same order).
pub fn same_bits_kernels(a: &Value, b: &Value) -> bool {
    fn family(run: &Value) -> Option<&str> {
        match run["product_kernel"].as_str() {
            Some("avx512" | "avx2") => Some("own"),
            other => other,
        }
    }
    let core = |run: &Value| run["blas_core"].as_str().map(str::to_string);
    core(a).is_some() && core(a) == core(b) && family(a).is_some() && family(a) == family(b)
}

/// The CPU's vector extensions that BLAS kernels (and so the last bits) depend on.
pub fn cpu_features() -> Value {
    #[cfg(target_arch = "x86_64")]
    {
        json!({
            "avx2": std::is_x86_feature_detected!("avx2"),
            "avx512f": std::is_x86_feature_detected!("avx512f"),
            "fma": std::is_x86_feature_detected!("fma"),
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Value::Null
    }
}

/// The commit of the repository at `dir` (the working directory for a run), and whether its
/// tracked files outside results/ differ from it.
fn git_revision(dir: &std::path::Path) -> Value {
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    json!({
        "commit": run(&["rev-parse", "HEAD"]),
        // Results are outputs: a run that wrote results/ must not make the next one "dirty".
        "dirty": run(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ":(top,exclude)results",
        ])
        .map(|s| !s.is_empty()),
    })
}

/// The checkout's revision as it was when this process started its runs (see
/// [`pin_git_revision`]).
static GIT_AT_START: std::sync::OnceLock<Value> = std::sync::OnceLock::new();

/// Record the checkout's commit and dirtiness now, once per process. Called before any run
/// starts, so that run.json names the code the runs started from, not whatever the checkout
/// holds when run.json is written: a paper-profile run can outlive a commit or an edit.
pub fn pin_git_revision() -> &'static Value {
    pinned(&GIT_AT_START, std::path::Path::new("."))
}

/// `cell`'s revision of `dir`, read the first time only.
fn pinned<'a>(cell: &'a std::sync::OnceLock<Value>, dir: &std::path::Path) -> &'a Value {
    cell.get_or_init(|| git_revision(dir))
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
}

/// The manifest's path and hash, and the `--set` entries applied to it (only when there are
/// some, so the runs of the file as it is keep their earlier run.json).
fn manifest_json(exp: &Experiment) -> Value {
    let mut m = json!({ "path": exp.path.display().to_string(), "sha256": exp.hash });
    if !exp.sets.is_empty() {
        m["set"] = json!(exp.sets);
    }
    m
}

pub fn run_json(exp: &Experiment, out: &Outcome) -> Value {
    let mut v = json!({
        "experiment": exp.id,
        "paper": exp.paper,
        "paper_file": exp.paper_file,
        // The registry's record (papers/<paper>.toml): the paper by name. Null without one.
        "paper_record": exp.paper_record,
        "title": exp.title,
        "profile": exp.profile,
        "manifest": manifest_json(exp),
        "points": exp.points.iter().map(|p| json!({
            "label": p.label, "data": p.data, "partition": p.partition, "problem": p.problem,
            "reference": crate::problem::family(p.problem.kind).reference_note(p),
        })).collect::<Vec<_>>(),
        "stop": exp.stop,
        "runs": out.records.iter().map(|r| {
            let mut run = json!({
                "run_id": r.key.run_id(), "params_resolved": r.resolved, "peak_rss_mib": r.peak_rss_mib,
                "point": r.key.point, "method": r.key.method, "label": r.key.label, "params": r.key.params,
                "seed": r.key.seed, "rounds": r.rounds, "converged": r.converged, "stop_reason": r.stop_reason,
                "status": r.status(&exp.stop, exp.kind).as_str(),
                "time_s": r.last().time_s, "threads": r.threads,
                "bytes_up_per_client": r.bytes_up_per_client,
            });
            // Only where present, so runs without them keep their earlier form.
            if !r.chosen.is_empty() {
                run["chosen"] = json!(r.chosen);
            }
            if let Some(e) = &r.error {
                run["error"] = json!(e);
            }
            run
        }).collect::<Vec<_>>(),
        "family": exp.kind,
        "methods": exp.methods.iter().map(|m| json!({
            "name": m.name, "label": m.label, "variant": m.variant, "params_resolved": m.resolved,
        })).collect::<Vec<_>>(),
        "not_implemented": out.planned.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
        "git": pin_git_revision().clone(),
        "dpca_bench": env!("CARGO_PKG_VERSION"),
        "stack": env!("DPCA_STACK_VERSIONS"),
        "blas": blas_backend(),
        "blas_core": blas_core(),
        "cpu": cpu_model(),
        "cpu_features": cpu_features(),
        "product_kernel": crate::linalg::gram_product::kernel().name(),
        "threads": out.threads,
        "peak_rss_mib": out.peak_rss_mib,
        "started_unix": out.started_unix,
        "finished_unix": out.finished_unix,
    });
    // Only where it applies, so the run.json of a manifest with [stop] keeps its form.
    if exp.stop_default {
        v["stop_default"] = json!(format!(
            "the {} family's default: the manifest has no [stop]",
            exp.kind.as_str()
        ));
    }
    // Re-rendered from committed CSVs: the provenance is the computing process's.
    if let Some(old) = &out.computed_by {
        for k in ["git", "dpca_bench", "stack", "blas", "cpu"] {
            if !old[k].is_null() {
                v["rendered_by"][k] = v[k].clone();
                v[k] = old[k].clone();
            }
        }
        // Recorded since run.json has had them: absent from older runs, never the renderer's.
        for k in ["blas_core", "cpu_features", "product_kernel"] {
            v["rendered_by"][k] = v[k].clone();
            match &old[k] {
                Value::Null => drop(v.as_object_mut().map(|o| o.remove(k))),
                old => v[k] = old.clone(),
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::{git_revision, pinned};
    use std::process::Command;

    /// A run writes results/: that alone must not mark the next run's code "dirty"; a change
    /// to a tracked source file must.
    #[test]
    fn dirty_ignores_results_but_not_sources() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("results/x")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("results/x/a.csv"), "1\n").unwrap();
        std::fs::write(dir.path().join("src/m.rs"), "//\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "c"]);
        let dirty = || git_revision(dir.path())["dirty"].as_bool();
        assert_eq!(dirty(), Some(false));
        std::fs::write(dir.path().join("results/x/a.csv"), "2\n").unwrap();
        assert_eq!(dirty(), Some(false), "results/ changed only");
        // Pinned before the edit, the revision stays what the run started from.
        let start = std::sync::OnceLock::new();
        let head = pinned(&start, dir.path()).clone();
        assert_eq!(head["dirty"].as_bool(), Some(false));
        std::fs::write(dir.path().join("src/m.rs"), "// changed\n").unwrap();
        assert_eq!(dirty(), Some(true), "a source changed");
        assert_eq!(*pinned(&start, dir.path()), head, "pinned at the start");
    }
}
