//! The NumPy twin of a round (scripts/numpy_rounds.py twin DIR): the bench's own data and start
//! written as .npy files with a twin.json beside them in a temporary folder, the script run on
//! it, its JSON read back, and with "out" set its final iterates (out_*.npy). Rounds whose work
//! depends on the data (FSSPCA's line search, IALM's and APGM's SVT) can only be compared with
//! NumPy on the same data and start. Shared by the benches and tests/lib/numpy_twin.rs (which
//! includes this file), so it uses nothing of the bench binary.
#![allow(dead_code)]

use anyhow::{bail, Context, Result};
use dpca_bench::data::loaders::npy::read_matrix;
use dpca_bench::methods::registry::Running;
use ndarray::{concatenate, Array2, ArrayView2, Axis};
use ndarray_npy::WriteNpyExt;
use std::ffi::OsStr;
use std::fs::File;
use std::io::BufWriter;
use std::process::Command;

/// The script, relative to the crate's root (where cargo runs benches and tests).
pub const SCRIPT: &str = "scripts/numpy_rounds.py";

/// The JSON that the script prints for `args`, run by `python` with `env` set.
pub fn script(python: &OsStr, args: &[String], env: &[(&str, &str)]) -> Result<serde_json::Value> {
    let out = Command::new(python)
        .arg(SCRIPT)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .with_context(|| format!("running {} {SCRIPT}", python.to_string_lossy()))?;
    if !out.status.success() {
        bail!(
            "{SCRIPT} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("the script's JSON")
}

/// A folder of inputs for one twin run, deleted when dropped.
pub struct Twin {
    dir: tempfile::TempDir,
}

impl Twin {
    pub fn new() -> Result<Self> {
        Ok(Twin {
            dir: tempfile::Builder::new().prefix("dpca-twin").tempdir()?,
        })
    }

    /// DIR/`name`.npy.
    pub fn put(&self, name: &str, a: ArrayView2<f64>) -> Result<()> {
        let path = self.dir.path().join(format!("{name}.npy"));
        a.write_npy(BufWriter::new(File::create(&path)?))
            .with_context(|| format!("writing {}", path.display()))
    }

    /// The script's args for this folder: `twin DIR`.
    pub fn args(&self, config: &serde_json::Value) -> Result<Vec<String>> {
        let path = self.dir.path().join("twin.json");
        std::fs::write(&path, serde_json::to_vec(config)?)?;
        Ok(vec!["twin".into(), self.dir.path().display().to_string()])
    }

    /// The twin's final iterate `name` (DIR/out_`name`.npy; "out": true in the config).
    pub fn get(&self, name: &str) -> Result<Array2<f64>> {
        read_matrix(&self.dir.path().join(format!("out_{name}.npy")))
    }
}

/// Every client's part `key` (as revealed), side by side: the twins' starts w0, and what the
/// tests compare them with.
pub fn client_parts(run: &Running, key: &str) -> Result<Array2<f64>> {
    let parts = run.net.reveal();
    let parts: Vec<ArrayView2<f64>> = parts
        .iter()
        .map(|m| m.get(key).map(|a| a.view()))
        .collect::<Result<_>>()?;
    Ok(concatenate(Axis(1), &parts)?)
}
