//! Resumable downloads: bytes go to `<dest>.part`, an interrupted download continues with an
//! HTTP Range request, and the file is renamed to `dest` only once its checksums pass.

use super::unpack::hash_file;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Download `url` to `dest`, checking the published SHA-256 and MD5 where given. Returns the
/// SHA-256. A failed download keeps `<dest>.part` so the next call resumes; a file whose
/// checksum fails is deleted.
pub fn download(url: &str, dest: &Path, sha256: Option<&str>, md5: Option<&str>) -> Result<String> {
    let part = part_path(dest);
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let agent = agent();
    // At most one restart: after a refused range, or a server that ignores ranges.
    for _ in 0..2 {
        let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        let mut req = agent.get(url);
        if have > 0 {
            req = req.header("Range", format!("bytes={have}-"));
        }
        let mut resp = req
            .call()
            .with_context(|| format!("{url}: request failed"))?;
        let status = resp.status().as_u16();
        let start = match status {
            200 => 0,
            206 => match content_range_start(&resp) {
                Some(s) if s == have => have,
                // An unexpected range: start again from scratch.
                _ => {
                    std::fs::remove_file(&part).ok();
                    continue;
                }
            },
            // Range not satisfiable: the part file is probably complete already.
            416 if have > 0 => break,
            _ => bail!("{url}: HTTP status {status}"),
        };
        let len = resp
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        let mut file = OpenOptions::new()
            .create(true)
            .append(start > 0)
            .write(true)
            .truncate(start == 0)
            .open(&part)
            .with_context(|| format!("cannot write {}", part.display()))?;
        let bar = bar(url, len.map(|l| l + start), start);
        let mut body = resp.body_mut().as_reader();
        let mut buf = vec![0u8; 1 << 16];
        let mut got = start;
        loop {
            let n = match body.read(&mut buf) {
                Ok(n) => n,
                Err(e) => {
                    bar.abandon();
                    bail!(
                        "{url}: download interrupted after {got} bytes ({e}); run the same \
                         command again to resume from {}",
                        part.display()
                    )
                }
            };
            if n == 0 {
                break;
            }
            file.write_all(&buf[..n])
                .with_context(|| format!("cannot write {}", part.display()))?;
            got += n as u64;
            bar.set_position(got);
        }
        file.sync_all()
            .with_context(|| format!("cannot write {}", part.display()))?;
        bar.finish_and_clear();
        if let Some(l) = len {
            if got != start + l {
                bail!(
                    "{url}: connection closed after {got} of {} bytes; run the same command \
                     again to resume",
                    start + l
                );
            }
        }
        break;
    }
    let (got_sha, got_md5) = hash_file(&part)?;
    for (kind, want, got) in [("SHA-256", sha256, &got_sha), ("MD5", md5, &got_md5)] {
        if let Some(want) = want {
            if got != want {
                std::fs::remove_file(&part).ok();
                bail!("{url}: {kind} of the download is {got}, expected {want}; deleted it");
            }
        }
    }
    std::fs::rename(&part, dest)
        .with_context(|| format!("cannot move {} to {}", part.display(), dest.display()))?;
    Ok(got_sha)
}

/// Where a download in progress is kept.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut s = dest.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

fn agent() -> ureq::Agent {
    use ureq::tls::{RootCerts, TlsConfig};
    // The platform's trust store: networks that inspect TLS install their own CA there.
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        // A stalled transfer fails (and resumes on the next fetch) instead of hanging; a slow
        // one is fine, so no limit on the whole body.
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// The first byte of a 206 response's `Content-Range: bytes START-END/TOTAL`.
fn content_range_start(resp: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    let v = resp.headers().get("content-range")?.to_str().ok()?;
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    rest.split('-').next()?.trim().parse().ok()
}

fn bar(url: &str, total: Option<u64>, at: u64) -> ProgressBar {
    let bar = match total {
        Some(t) => ProgressBar::new(t).with_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30.cyan/blue}] {bytes}/{total_bytes} {bytes_per_sec} (ETA {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{msg} {spinner} {bytes} {bytes_per_sec}")
                .expect("valid template"),
        ),
    };
    let file = url.rsplit('/').next().unwrap_or(url).to_string();
    bar.set_message(file);
    bar.set_position(at);
    bar
}
