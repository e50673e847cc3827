//! On-disk cache of generated matrices (data and reference solutions), verified on load.
//!
//! File layout (format DPCAMAT2, integers little-endian):
//!
//! | byte offset     | field                                                        |
//! |-----------------|--------------------------------------------------------------|
//! | 0               | magic `DPCAMAT2`                                             |
//! | 8               | rows, u64                                                    |
//! | 16              | cols, u64                                                    |
//! | 24              | key length k, u64                                            |
//! | 32              | the key: the full spec text the matrix was built from, UTF-8 |
//! | 32 + k          | rows·cols f64, column-major                                  |
//! | 32 + k + 8·r·c  | SHA-256 of every byte before it (32 bytes)                   |
//!
//! The file name holds only a hash of the key, so the key itself is stored and compared: a
//! valid file of another matrix copied under the expected name is rejected, not trusted. The
//! digest covers the header too, so a rewritten shape is caught even when the payload is
//! intact. Sizes are checked against the file length, with checked arithmetic, before anything
//! is allocated. Any mismatch (including the older DPCAMAT1 format) is reported and the matrix
//! regenerated. Files are written to a temporary name and renamed, so an interrupted write
//! never leaves a valid-looking file. [`read_columns`] keeps only some columns (an MPI rank's)
//! while the whole file still streams through the digest.

use crate::util::atomic_write_with;
use anyhow::{bail, Context, Result};
use ndarray::{Array2, ShapeBuilder};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"DPCAMAT2";
/// Magic of the previous format (no key, digest of the payload only): regenerated.
const MAGIC_V1: &[u8; 8] = b"DPCAMAT1";
/// Magic, rows, cols, key length.
const HEADER: usize = 8 + 8 + 8 + 8;
const DIGEST: usize = 32;
/// Payload bytes hashed and written at a time.
const CHUNK: usize = 1 << 16;

/// A folder of cached matrices, keyed by the full text of their spec.
pub struct MatrixCache {
    dir: PathBuf,
}

impl MatrixCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        // A write an earlier run was killed in left its temporary file (45 MB in the corpus of
        // issue 41), which no later write of that key would replace.
        crate::util::sweep_stale_temps(&dir);
        Self { dir }
    }

    /// Where the matrix for `key` lives: a readable prefix plus a hash of the whole key.
    pub fn path(&self, prefix: &str, key: &str) -> PathBuf {
        let h = hex(&Sha256::digest(key.as_bytes())[..8]);
        self.dir.join(format!("{prefix}-{h}.f64"))
    }

    /// Load the cached matrix for `key`, or build it with `make` and store it.
    /// A file that is corrupt, of an older format or of another key is reported on stderr
    /// and rebuilt. Column-major either way: what the caller computes from it must not depend
    /// on whether the cache was warm (BLAS sums in another order on another layout — measured:
    /// centralised ManPG's reference came back row-major when built, and `manpg_gap` differed
    /// by 6e-12 between a first run and every later one).
    pub fn get_or_build(
        &self,
        prefix: &str,
        key: &str,
        make: impl FnOnce() -> Result<Array2<f64>>,
    ) -> Result<Array2<f64>> {
        let path = self.path(prefix, key);
        if path.exists() {
            match read_matrix(&path, key) {
                Ok(a) => return Ok(a),
                // The error names the file.
                Err(e) => eprintln!("warning: unusable cache file: {e:#}; regenerating it"),
            }
        }
        let mut a = make()?;
        if !a.t().is_standard_layout() {
            a = crate::linalg::to_f_order(a.view());
        }
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create cache folder {}", self.dir.display()))?;
        write_matrix(&path, key, &a)?;
        Ok(a)
    }
}

impl MatrixCache {
    /// Columns `wanted` (in that order) of the matrix cached for `key`, read without holding
    /// the others, the whole file still streamed through its SHA-256. None when no file is
    /// cached; a file that cannot be used is reported on stderr and None returned, so that the
    /// caller builds the columns itself (it does not rewrite the file: it lacks the others).
    pub fn get_columns(&self, prefix: &str, key: &str, wanted: &[usize]) -> Option<Array2<f64>> {
        let path = self.path(prefix, key);
        if !path.exists() {
            return None;
        }
        match read_columns(&path, key, wanted) {
            Ok(a) => Some(a),
            Err(e) => {
                eprintln!("warning: unusable cache file: {e:#}; building the columns instead");
                None
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Passes bytes through to `inner` and hashes them on the way.
struct Hashing<'a, W: Write> {
    inner: &'a mut W,
    hasher: Sha256,
}

impl<W: Write> Hashing<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }
}

/// Write `a`, cached for `key`, atomically in the cache format.
pub fn write_matrix(path: &Path, key: &str, a: &Array2<f64>) -> Result<()> {
    atomic_write_with(path, |w| {
        let mut h = Hashing {
            inner: w,
            hasher: Sha256::new(),
        };
        h.put(MAGIC)?;
        for v in [a.nrows(), a.ncols(), key.len()] {
            h.put(&(v as u64).to_le_bytes())?;
        }
        h.put(key.as_bytes())?;
        // Column-major whatever the in-memory layout; in chunks, never a second full copy.
        let mut buf = Vec::with_capacity(CHUNK);
        for v in a.t().iter() {
            buf.extend_from_slice(&v.to_le_bytes());
            if buf.len() >= CHUNK {
                h.put(&buf)?;
                buf.clear();
            }
        }
        h.put(&buf)?;
        let digest = h.hasher.finalize();
        w.write_all(&digest)
    })
}

/// Read a matrix written by [`write_matrix`] and check that it was cached for `key`.
///
/// Every rejection names the file, the byte offset or field at fault and what was expected.
pub fn read_matrix(path: &Path, key: &str) -> Result<Array2<f64>> {
    read_stored(path, key, None)
}

/// Columns `wanted` (in that order, each at most once) of the matrix [`read_matrix`] would
/// return, checked as it checks the file (the digest covers every byte, so the whole file is
/// read), holding only the wanted columns.
pub fn read_columns(path: &Path, key: &str, wanted: &[usize]) -> Result<Array2<f64>> {
    read_stored(path, key, Some(wanted))
}

/// [`read_matrix`] (`wanted` None) or [`read_columns`].
fn read_stored(path: &Path, key: &str, wanted: Option<&[usize]>) -> Result<Array2<f64>> {
    let name = path.display();
    let file = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let len = file
        .metadata()
        .with_context(|| format!("cannot read {name}"))?
        .len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut hasher = Sha256::new();
    let mut read = |buf: &mut [u8], what: &str| -> Result<()> {
        r.read_exact(buf)
            .with_context(|| format!("{name}: cannot read the {what}"))?;
        hasher.update(&*buf);
        Ok(())
    };

    // Magic at byte offset 0: checked alone, so that a short foreign file reports its magic.
    let mut magic = [0u8; 8];
    if len < magic.len() as u64 {
        bail!("{name}: truncated: {len} bytes, but the magic `DPCAMAT2` alone needs 8");
    }
    read(&mut magic, "magic")?;
    if &magic == MAGIC_V1 {
        bail!("{name}: byte offset 0: older cache format DPCAMAT1, expected DPCAMAT2");
    }
    if &magic != MAGIC {
        bail!(
            "{name}: byte offset 0: magic `{}` is not DPCAMAT2 (not a dpca matrix cache file)",
            String::from_utf8_lossy(&magic).escape_debug()
        );
    }
    if len < HEADER as u64 {
        bail!(
            "{name}: truncated: {len} bytes, but the header (magic, rows, cols, key length) \
             needs {HEADER}"
        );
    }
    let mut fields = [0u8; HEADER - 8];
    read(&mut fields, "header")?;
    let field = |k: usize| u64::from_le_bytes(fields[8 * k..8 * k + 8].try_into().expect("8"));
    let (rows, cols, key_len) = (field(0), field(1), field(2));

    // Nothing is allocated before the declared size equals the file's: a header is untrusted.
    let total = rows
        .checked_mul(cols)
        .and_then(|e| e.checked_mul(8))
        .and_then(|p| p.checked_add(key_len))
        .and_then(|s| s.checked_add((HEADER + DIGEST) as u64));
    if total != Some(len) {
        bail!(
            "{name}: the header declares rows {rows} (byte offset 8), cols {cols} (byte offset \
             16) and a {key_len}-byte key (byte offset 24), which need {} bytes; the file has \
             {len} (truncated or corrupt)",
            total.map_or("more than 2^64".into(), |t| t.to_string())
        );
    }
    // The total fits in the file, hence in memory on 64-bit targets.
    let (rows, cols, key_len) = (rows as usize, cols as usize, key_len as usize);

    let mut stored = vec![0u8; key_len];
    read(&mut stored, "key")?;
    if stored != key.as_bytes() {
        let at = stored
            .iter()
            .zip(key.as_bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(stored.len().min(key.len()));
        bail!(
            "{name}: byte offset {}: the file caches key `{}`, expected `{}` (a file of another \
             matrix)",
            HEADER + at,
            shorten(&String::from_utf8_lossy(&stored), at),
            shorten(key, at)
        );
    }

    // Where each stored column goes in the result (usize::MAX: not kept).
    let (kept, place) = match wanted {
        None => (cols, (0..cols).collect::<Vec<_>>()),
        Some(w) => {
            let mut place = vec![usize::MAX; cols];
            for (at, &j) in w.iter().enumerate() {
                if j >= cols || place[j] != usize::MAX {
                    bail!("{name}: column {j} asked for twice or beyond the matrix's {cols}");
                }
                place[j] = at;
            }
            (w.len(), place)
        }
    };
    let mut data = vec![0.0; rows * kept];
    // One column at a time: the payload is column-major.
    let mut buf = vec![0u8; rows * 8];
    for &at in &place {
        read(&mut buf, "payload")?;
        if at != usize::MAX {
            let column = &mut data[at * rows..(at + 1) * rows];
            for (v, c) in column.iter_mut().zip(buf.chunks_exact(8)) {
                *v = f64::from_le_bytes(c.try_into().expect("8"));
            }
        }
    }
    let digest = hasher.finalize();
    let mut stored = [0u8; DIGEST];
    r.read_exact(&mut stored)
        .with_context(|| format!("{name}: cannot read the checksum"))?;
    if stored != digest.as_slice() {
        bail!(
            "{name}: byte offset {}: SHA-256 checksum mismatch: the header, key or payload is \
             corrupt",
            len - DIGEST as u64
        );
    }
    column_major(rows, kept, data).with_context(|| format!("{name}: {rows}×{cols}"))
}

fn column_major(rows: usize, cols: usize, data: Vec<f64>) -> Result<Array2<f64>> {
    Ok(Array2::from_shape_vec((rows, cols).f(), data)?)
}

/// A key for an error message: around the first difference at byte `at`, at most ~120 chars.
fn shorten(s: &str, at: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    // `at` is a byte offset; a char position near it is close enough for a message.
    let at = s
        .char_indices()
        .position(|(i, _)| i >= at)
        .unwrap_or(chars.len());
    let start = at.saturating_sub(60);
    let end = (at + 60).min(chars.len());
    // Control characters escaped: a damaged file's bytes must not drive the terminal.
    let mut t = crate::util::escape_controls(&chars[start..end].iter().collect::<String>());
    if start > 0 {
        t.insert(0, '…');
    }
    if end < chars.len() {
        t.push('…');
    }
    t
}
