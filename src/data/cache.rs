//! On-disk cache of generated matrices (data and reference solutions), verified on load.
//!
//! File layout (little-endian): magic `DPCAMAT1`, rows u64, cols u64, SHA-256 of the payload
//! (32 bytes), then rows·cols f64 in column-major order. A file that is truncated, has the wrong
//! magic or shape, or whose payload hash differs is reported and regenerated. Files are written
//! to a temporary name and renamed, so an interrupted write never leaves a valid-looking file.

use crate::util::atomic_write_with;
use anyhow::{bail, Context, Result};
use ndarray::{Array2, ShapeBuilder};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"DPCAMAT1";
const HEADER: usize = 8 + 8 + 8 + 32;

/// A folder of cached matrices, keyed by the full text of their spec.
pub struct MatrixCache {
    dir: PathBuf,
}

impl MatrixCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Where the matrix for `key` lives: a readable prefix plus a hash of the whole key.
    pub fn path(&self, prefix: &str, key: &str) -> PathBuf {
        let h = hex(&Sha256::digest(key.as_bytes())[..8]);
        self.dir.join(format!("{prefix}-{h}.f64"))
    }

    /// Load the cached matrix for `key`, or build it with `make` and store it.
    /// A corrupt cache file is reported on stderr and rebuilt.
    pub fn get_or_build(
        &self,
        prefix: &str,
        key: &str,
        make: impl FnOnce() -> Result<Array2<f64>>,
    ) -> Result<Array2<f64>> {
        let path = self.path(prefix, key);
        if path.exists() {
            match read_matrix(&path) {
                Ok(a) => return Ok(a),
                Err(e) => eprintln!(
                    "warning: cache file {} is unusable ({e:#}); regenerating",
                    path.display()
                ),
            }
        }
        let a = make()?;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create cache folder {}", self.dir.display()))?;
        write_matrix(&path, &a)?;
        Ok(a)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn payload_bytes(a: &Array2<f64>) -> Vec<u8> {
    // Column-major order whatever the in-memory layout.
    a.t().iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Write `a` atomically in the cache format.
pub fn write_matrix(path: &Path, a: &Array2<f64>) -> Result<()> {
    let payload = payload_bytes(a);
    let digest = Sha256::digest(&payload);
    atomic_write_with(path, |w| {
        w.write_all(MAGIC)?;
        w.write_all(&(a.nrows() as u64).to_le_bytes())?;
        w.write_all(&(a.ncols() as u64).to_le_bytes())?;
        w.write_all(&digest)?;
        w.write_all(&payload)?;
        Ok(())
    })
}

/// Read and verify a matrix written by [`write_matrix`].
pub fn read_matrix(path: &Path) -> Result<Array2<f64>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len() as usize;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER];
    if len < HEADER {
        bail!(
            "{}: truncated header ({len} bytes, need {HEADER})",
            path.display()
        );
    }
    r.read_exact(&mut header)?;
    if &header[..8] != MAGIC {
        bail!(
            "{}: wrong magic at byte 0 (not a dpca matrix file)",
            path.display()
        );
    }
    let rows = u64::from_le_bytes(header[8..16].try_into().unwrap()) as usize;
    let cols = u64::from_le_bytes(header[16..24].try_into().unwrap()) as usize;
    let expected = rows
        .checked_mul(cols)
        .and_then(|e| e.checked_mul(8))
        .map(|e| e + HEADER);
    if expected != Some(len) {
        bail!(
            "{}: {rows}×{cols} needs {} bytes, file has {len} (truncated or corrupt)",
            path.display(),
            expected.map_or("an impossible number of".into(), |e| e.to_string())
        );
    }
    let mut payload = vec![0u8; len - HEADER];
    r.read_exact(&mut payload)?;
    if Sha256::digest(&payload).as_slice() != &header[24..56] {
        bail!("{}: payload checksum mismatch (corrupt)", path.display());
    }
    let data: Vec<f64> = payload
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Ok(Array2::from_shape_vec((rows, cols).f(), data)?)
}
