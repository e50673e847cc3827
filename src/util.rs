//! Small file helpers shared by the cache and the result writers, the process's peak memory, and
//! the plain-text tables the command line prints.

pub mod memory;

use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Write a file atomically: into a temporary file of the same folder, named after this process
/// and a counter so that concurrent writers never share one, then rename over `path`. A failed
/// write removes its temporary file; one a killed process left is removed by the next write into
/// the same folder ([`sweep_stale_temps`]).
pub fn atomic_write_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        sweep_stale_temps(dir);
    }
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file path", path.display()))?
        .to_string_lossy();
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp_name = format!(".{name}.{}-{unique}.tmp", std::process::id());
    let tmp = dir.map_or_else(|| tmp_name.clone().into(), |d| d.join(&tmp_name));
    let result = (|| {
        let file = File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write(&mut w)
            .and_then(|_| w.flush())
            .and_then(|_| w.get_ref().sync_all())
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Remove the temporary files of [`atomic_write_with`] (`.NAME.PID-N.tmp`) and of the figures
/// (`.NAME.PID-N.tmp.EXT`) in `dir` whose process no longer runs on this machine: SIGINT,
/// SIGTERM and kill end dpca without unwinding, so a writer cannot remove its own. Once per
/// folder and process (a folder of stored runs is written thousands of times).
pub fn sweep_stale_temps(dir: &Path) {
    static SWEPT: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let first = SWEPT.lock().is_ok_and(|mut s| s.insert(dir.to_path_buf()));
    let Some(entries) = first.then(|| std::fs::read_dir(dir).ok()).flatten() else {
        return;
    };
    for e in entries.flatten() {
        let owner = e.file_name().to_str().and_then(temp_owner);
        let stale = owner.is_some_and(|pid| pid != std::process::id() && !process_alive(pid));
        if stale && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The process id in a temporary file's name `.NAME.PID-N.tmp` or `.NAME.PID-N.tmp.EXT`.
fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (head, ext) = rest.rsplit_once(".tmp")?;
    if !(ext.is_empty() || ext.strip_prefix('.').is_some_and(|x| !x.contains('.'))) {
        return None;
    }
    let (pid, n) = head.rsplit_once('.')?.1.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok().filter(|&p| p > 0 && p <= i32::MAX as u32)
}

/// Whether process `pid` exists (signal 0 checks without sending; EPERM: another user's).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 sends nothing; pid is positive, so no process group is addressed.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// An exclusive lock on a folder, held until dropped: two dpca processes never write one
/// results folder at once. A second one waits, saying for what.
pub struct FolderLock {
    _file: File,
}

impl FolderLock {
    pub fn acquire(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        sweep_stale_temps(dir);
        let path = dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                eprintln!(
                    "{} is busy: another dpca process is writing it; waiting for it to finish",
                    dir.display()
                );
                file.lock()
                    .with_context(|| format!("cannot lock {}", path.display()))?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
        Ok(Self { _file: file })
    }
}

/// Remove `dir` if it holds nothing but its `.lock` and an empty `runs/`, then each parent up
/// to (not including) `root` while it is empty. Anything else found stops it: nothing stored is
/// ever removed.
pub fn remove_bare_folders(dir: &Path, root: &Path) {
    let bare = |d: &Path| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries.flatten().all(|e| {
                let name = e.file_name();
                name == ".lock"
                    || (name == "runs"
                        && std::fs::read_dir(e.path()).is_ok_and(|mut r| r.next().is_none()))
            })
        })
    };
    if !bare(dir) {
        return;
    }
    let _ = std::fs::remove_file(dir.join(".lock"));
    let _ = std::fs::remove_dir(dir.join("runs"));
    let mut d = Some(dir);
    while let Some(p) = d.filter(|p| *p != root && p.starts_with(root)) {
        if std::fs::remove_dir(p).is_err() {
            break;
        }
        d = p.parent();
    }
}

/// Write `bytes` to `path` atomically.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_write_with(path, |w| w.write_all(bytes))
}

/// Peak resident memory of this process so far (VmHWM), in MiB.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Rows of left-aligned columns, each as wide as its widest cell; the last column is not padded.
pub fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == row.len() {
                    c.clone()
                } else {
                    format!("{c:<w$}", w = width[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `s` with its control characters escaped (`\u{1b}`, `\n`): text read from a file, safe to print
/// to a terminal.
pub fn escape_controls(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let (escaped, plain) = match c.is_control() {
                true => (Some(c.escape_default()), None),
                false => (None, Some(c)),
            };
            escaped.into_iter().flatten().chain(plain)
        })
        .collect()
}

/// Bytes of a user's file quoted in an error message: at most 40 characters, lossily decoded,
/// control characters escaped (`\u{1b}`): an ESC sequence echoed raw would drive the terminal.
pub fn excerpt(s: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&s[..s.len().min(4 * MAX)]);
    let cut: String = text.chars().take(MAX).collect();
    let mut out = escape_controls(&cut);
    if s.len() > 4 * MAX || text.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

/// The text of a panic's payload (a `&str` or a `String`; anything else is named as such).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".into())
}

#[cfg(test)]
mod tests {
    use super::{excerpt, panic_message, remove_bare_folders, sweep_stale_temps, temp_owner};

    /// A folder with only its lock and an empty runs/ goes, with its empty parents up to the
    /// root; a parent holding anything stays, and a folder holding a stored run is untouched.
    #[test]
    fn bare_folders_go_and_nothing_stored_does() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("results");
        let dir = root.join("mine/x/quick");
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        std::fs::write(dir.join(".lock"), "").unwrap();
        std::fs::write(root.join("mine/keep.txt"), "k").unwrap();
        remove_bare_folders(&dir, &root);
        assert!(!root.join("mine/x").exists());
        assert!(root.join("mine/keep.txt").exists() && root.exists());
        let stored = root.join("mine/y/quick");
        std::fs::create_dir_all(stored.join("runs")).unwrap();
        std::fs::write(stored.join("runs/a.json"), "{}").unwrap();
        std::fs::write(stored.join(".lock"), "").unwrap();
        remove_bare_folders(&stored, &root);
        assert!(stored.join("runs/a.json").exists() && stored.join(".lock").exists());
    }

    #[test]
    fn escape_excerpts_quote_control_characters_and_stay_short() {
        assert_eq!(excerpt(b"1.5e3"), "1.5e3");
        assert_eq!(excerpt(b"\x1b[31mred\x07\r"), "\\u{1b}[31mred\\u{7}\\r");
        assert_eq!(excerpt("ünï\u{9b}x".as_bytes()), "ünï\\u{9b}x");
        assert_eq!(excerpt(&[b'a'; 41]), format!("{}…", "a".repeat(40)));
        assert_eq!(excerpt(&[0xff, b'x']), "\u{fffd}x");
        assert!(!excerpt(&[0x1b; 1000]).contains('\x1b'));
    }

    #[test]
    fn temp_owner_reads_only_temporary_names() {
        assert_eq!(temp_owner(".trace.csv.123-4.tmp"), Some(123));
        assert_eq!(temp_owner(".kkt.svg.77-0.tmp.svg"), Some(77));
        assert_eq!(temp_owner(".a.b.c.9-12.tmp"), Some(9));
        for name in [
            "trace.csv",
            "trace.123-4.tmp",
            ".lock",
            ".x.0-1.tmp",
            ".x.123-.tmp",
            ".x.abc-1.tmp",
            ".x.123-4.tmp.a.b",
            ".x.99999999999-1.tmp",
        ] {
            assert_eq!(temp_owner(name), None, "{name}");
        }
    }

    /// A writer killed mid-write (SIGINT has no handler: nothing unwinds) leaves its temporary
    /// file; the next writer in the folder removes it, and never a live process's.
    #[test]
    fn leftover_temp_files_of_dead_processes_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A process that has ended: its pid is free until reused.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::process::id();
        let names = [
            format!(".trace.csv.{dead}-0.tmp"),
            format!(".kkt.png.{dead}-3.tmp.png"),
            format!(".summary.csv.{live}-9.tmp"),
            format!("notes.{dead}-0.tmp"),
        ];
        for n in &names {
            std::fs::write(d.join(n), "x").unwrap();
        }
        sweep_stale_temps(d);
        let left: Vec<bool> = names.iter().map(|n| d.join(n).exists()).collect();
        assert_eq!(left, [false, false, true, true]);
    }

    #[test]
    fn a_panic_message_is_read_from_str_and_string_payloads() {
        let of = |f: fn()| {
            let p = std::panic::catch_unwind(f).unwrap_err();
            panic_message(p.as_ref())
        };
        assert_eq!(of(|| panic!("singular")), "singular");
        assert_eq!(of(|| panic!("{} of {}", 1, 2)), "1 of 2");
        assert_eq!(
            of(|| std::panic::panic_any(7u8)),
            "a non-text panic payload"
        );
    }
}
