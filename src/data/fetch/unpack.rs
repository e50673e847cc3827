//! Hashing and installing files: every stored file is written under a temporary name, hashed
//! on the way, and renamed only once its SHA-256 matches.

use crate::data::loaders::{decoded_cap, Capped};
use anyhow::{bail, Context, Result};
use md5::Md5;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file, lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    Ok(hash_file(path)?.0)
}

/// SHA-256 and MD5 of a file in one pass (MD5: what some publishers give).
pub fn hash_file(path: &Path) -> Result<(String, String)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let (mut sha, mut md5) = (Sha256::new(), Md5::new());
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = r
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        md5.update(&buf[..n]);
    }
    Ok((hex(&sha.finalize()), hex(&md5.finalize())))
}

/// `<path>.tmp`, next to the final file so that the rename stays on one file system.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Copy `reader` into `dest` if its SHA-256 is `expected` (None: any, it is returned and
/// recorded by the caller). `what` names the origin in errors.
pub fn install(
    mut reader: impl Read,
    what: &str,
    dest: &Path,
    expected: Option<&str>,
) -> Result<String> {
    let tmp = tmp_path(dest);
    let file = File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let copied: Result<()> = (|| {
        loop {
            let n = reader
                .read(&mut buf)
                .with_context(|| format!("cannot read {what}"))?;
            if n == 0 {
                break;
            }
            sha.update(&buf[..n]);
            w.write_all(&buf[..n])
                .with_context(|| format!("cannot write {}", tmp.display()))?;
        }
        w.flush()
            .and_then(|_| w.get_ref().sync_all())
            .with_context(|| format!("cannot write {}", tmp.display()))
    })();
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let got = hex(&sha.finalize());
    if let Some(want) = expected {
        if got != want {
            let _ = std::fs::remove_file(&tmp);
            bail!("{what}: SHA-256 of the content is {got}, expected {want}; nothing was stored");
        }
    }
    std::fs::rename(&tmp, dest)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), dest.display()))?;
    Ok(got)
}

/// `from` is a `.gz` that is stored decompressed.
pub fn needs_gunzip(from: &str, to: &str) -> bool {
    from.ends_with(".gz") && !to.ends_with(".gz")
}

/// `reader`, gunzipped when `gunzip`; the decoded bytes at most `known` (the stored file's
/// published size) or else [`decoded_cap`] of `compressed`: a gzip bomb fills neither the
/// disk nor the time, and the error names `what`.
pub fn maybe_gunzip<'a>(
    reader: impl Read + 'a,
    gunzip: bool,
    what: &str,
    compressed: u64,
    known: Option<u64>,
) -> Box<dyn Read + 'a> {
    if !gunzip {
        return Box::new(reader);
    }
    let decoder = flate2::read::MultiGzDecoder::new(BufReader::new(reader));
    Box::new(cap(decoder, what, compressed, known))
}

/// `decoded` giving at most `known` bytes, or [`decoded_cap`] of `compressed` if not known.
fn cap<R: Read>(decoded: R, what: &str, compressed: u64, known: Option<u64>) -> Capped<R> {
    let (cap, why) = match known {
        Some(b) => (b, "the published size of the file".to_string()),
        None => (
            decoded_cap(compressed),
            format!(
                "{}× its {compressed} compressed bytes, at least {} MiB",
                crate::data::loaders::MAX_EXPANSION,
                crate::data::loaders::MIN_DECODED_CAP >> 20
            ),
        ),
    };
    let message = format!(
        "{what}: decompresses to more than {cap} bytes ({why}): a decompression bomb or a \
         corrupt source"
    );
    Capped::new(decoded, cap, message)
}

/// Whether archive path `path` is member `from`: equal, or ending in `/from` (whole path
/// components, so macOS's `._name` resource files never match).
pub fn is_member(path: &str, from: &str) -> bool {
    path == from
        || path
            .strip_suffix(from)
            .is_some_and(|head| head.ends_with('/'))
}

/// One member to take out of an archive: its path suffix, where it goes, its expected hash.
pub struct Take<'a> {
    pub from: &'a str,
    pub dest: PathBuf,
    pub expected: Option<&'a str>,
    /// Its published size, if known (the cap on its decompressed bytes).
    pub bytes: Option<u64>,
}

/// Install `takes` from a .tar.gz; returns their SHA-256 in the same order.
pub fn from_tar_gz(archive: &Path, takes: &[Take]) -> Result<Vec<String>> {
    let name = archive.display().to_string();
    let file = File::open(archive).with_context(|| format!("cannot open {name}"))?;
    let compressed = file.metadata().map_or(0, |m| m.len());
    let gz = flate2::read::GzDecoder::new(BufReader::with_capacity(1 << 20, file));
    let mut tar = tar::Archive::new(cap(gz, &name, compressed, None));
    let mut got: Vec<Option<String>> = vec![None; takes.len()];
    for entry in tar
        .entries()
        .with_context(|| format!("{name}: not a tar archive"))?
    {
        let entry = entry.with_context(|| format!("{name}: corrupt or truncated tar archive"))?;
        let path = entry.path()?.to_string_lossy().into_owned();
        take_if_wanted(&name, compressed, &path, entry, takes, &mut got)?;
    }
    collect(&name, takes, got)
}

/// Install `takes` from a zip (a wheel); returns their SHA-256 in the same order.
pub fn from_zip(archive: &Path, takes: &[Take]) -> Result<Vec<String>> {
    let name = archive.display().to_string();
    let file = File::open(archive).with_context(|| format!("cannot open {name}"))?;
    let compressed = file.metadata().map_or(0, |m| m.len());
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .with_context(|| format!("{name}: not a zip archive"))?;
    let mut got: Vec<Option<String>> = vec![None; takes.len()];
    for i in 0..zip.len() {
        let entry = zip
            .by_index(i)
            .with_context(|| format!("{name}: corrupt zip entry {i}"))?;
        let path = entry
            .name()
            .with_context(|| format!("{name}: entry {i} has an unreadable name"))?
            .into_owned();
        let what = format!("{name}: member {path}");
        let entry = cap(entry, &what, compressed, None);
        take_if_wanted(&name, compressed, &path, entry, takes, &mut got)?;
    }
    collect(&name, takes, got)
}

/// Install archive member `path` if it is one of `takes` not installed yet (the first copy wins).
fn take_if_wanted(
    name: &str,
    compressed: u64,
    path: &str,
    reader: impl Read,
    takes: &[Take],
    got: &mut [Option<String>],
) -> Result<()> {
    if let Some(k) = takes.iter().position(|t| is_member(path, t.from)) {
        if got[k].is_none() {
            let t = &takes[k];
            let gunzip = needs_gunzip(t.from, &t.dest.to_string_lossy());
            let what = format!("{name}: member {path}");
            got[k] = Some(install(
                maybe_gunzip(reader, gunzip, &what, compressed, t.bytes),
                &what,
                &t.dest,
                t.expected,
            )?);
        }
    }
    Ok(())
}

fn collect(name: &str, takes: &[Take], got: Vec<Option<String>>) -> Result<Vec<String>> {
    takes
        .iter()
        .zip(got)
        .map(|(t, g)| g.ok_or_else(|| anyhow::anyhow!("{name} has no member {}", t.from)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::loaders::MIN_DECODED_CAP;

    /// A .gz of `bytes` zeros in `dir`, and its compressed size.
    fn gzip_of_zeros(dir: &Path, bytes: u64) -> (PathBuf, u64) {
        let path = dir.join("bomb.gz");
        let file = File::create(&path).unwrap();
        let mut w = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..bytes >> 20 {
            w.write_all(&chunk).unwrap();
        }
        w.finish().unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        (path, len)
    }

    fn gunzip_into(src: &Path, dest: &Path, known: Option<u64>) -> Result<String> {
        let file = File::open(src).unwrap();
        let compressed = file.metadata().unwrap().len();
        let what = src.display().to_string();
        install(
            maybe_gunzip(file, true, &what, compressed, known),
            &what,
            dest,
            None,
        )
    }

    /// A downloaded .gz expanding past the cap (100× its size, at least 256 MiB, or the file's
    /// published size) is an error naming it and the cap; nothing is stored, no temporary file
    /// is left. Within the cap it is stored whole.
    #[test]
    fn abort_fetched_gzip_bombs_stop_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let (bomb, compressed) = gzip_of_zeros(dir.path(), MIN_DECODED_CAP + (1 << 20));
        assert!(compressed * 100 < MIN_DECODED_CAP, "{compressed}");
        let dest = dir.path().join("stored");
        let e = format!("{:#}", gunzip_into(&bomb, &dest, None).unwrap_err());
        for needle in [
            "bomb.gz",
            "decompression bomb",
            &MIN_DECODED_CAP.to_string(),
            &format!("its {compressed} compressed bytes"),
        ] {
            assert!(e.contains(needle), "no {needle:?} in: {e}");
        }
        assert!(!dest.exists() && !tmp_path(&dest).exists());
        // A published size caps it tighter.
        let e = format!(
            "{:#}",
            gunzip_into(&bomb, &dest, Some(1 << 20)).unwrap_err()
        );
        assert!(e.contains("published size") && e.contains("1048576"), "{e}");
        assert!(!dest.exists() && !tmp_path(&dest).exists());
        // At the published size exactly: stored.
        let (small, _) = gzip_of_zeros(dir.path(), 2 << 20);
        gunzip_into(&small, &dest, Some(2 << 20)).unwrap();
        assert_eq!(std::fs::metadata(&dest).unwrap().len(), 2 << 20);
    }
}
