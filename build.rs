//! Records the versions of the numerical stack (from Cargo.lock) for run.json provenance.

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut versions = Vec::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if [
                "ndarray",
                "ndarray-linalg",
                "lax",
                "plotters",
                "rayon",
                "openblas-src",
                "intel-mkl-src",
            ]
            .contains(&n.as_str())
            {
                versions.push(format!("{n} {}", v.trim_matches('"')));
            }
        }
    }
    println!(
        "cargo:rustc-env=DPCA_STACK_VERSIONS={}",
        versions.join(", ")
    );
}
