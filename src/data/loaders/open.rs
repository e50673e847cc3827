//! Opening data files whatever their compression: gzip and bzip2 are recognised by their
//! magic bytes (not the file name), so a renamed or recompressed file still reads.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Decoded bytes a compressed file may expand to, per compressed byte: gzip and bzip2 give
/// 3–10× on numeric text (MNIST 5×, rcv1 4×); a member of 8 MB expanding to 8 GiB (1024×) is a
/// bomb, refused with an error instead of aborting on the memory it would fill.
pub const MAX_EXPANSION: u64 = 100;
/// However small the compressed file, this much may always be decoded.
pub const MIN_DECODED_CAP: u64 = 256 << 20;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const BZIP2_MAGIC: &[u8] = b"BZh";

/// Which decoder a file needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
}

impl Compression {
    /// Words for error messages: offsets in a compressed file refer to its decoded content.
    pub fn offsets_note(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => " of the decompressed (gzip) data",
            Compression::Bzip2 => " of the decompressed (bzip2) data",
        }
    }
}

/// The error a [`Capped`] reader gives past its cap: its message says all.
#[derive(Debug)]
struct DecodedTooLarge(String);

impl std::fmt::Display for DecodedTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodedTooLarge {}

/// The most a compressed file of `compressed` bytes may decode to: [`MAX_EXPANSION`] times its
/// size, at least [`MIN_DECODED_CAP`].
pub fn decoded_cap(compressed: u64) -> u64 {
    compressed
        .saturating_mul(MAX_EXPANSION)
        .max(MIN_DECODED_CAP)
}

/// A decoder that fails (not aborts, nor fills a disk) once it has given `left` bytes and would
/// give more.
pub(crate) struct Capped<R> {
    inner: R,
    left: u64,
    why: Option<DecodedTooLarge>,
}

impl<R> Capped<R> {
    /// `inner` giving at most `cap` bytes; past them an I/O error with `message`.
    pub(crate) fn new(inner: R, cap: u64, message: String) -> Self {
        Capped {
            inner,
            left: cap,
            why: Some(DecodedTooLarge(message)),
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more than the cap is the proof; none is the end of the data.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            let why = self.why.take().map_or_else(
                || std::io::Error::other("decoded data past the cap"),
                std::io::Error::other,
            );
            return Err(why);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Whether an I/O error is a [`Capped`] reader's: its message says all, no "corrupt" around it.
fn is_cap(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<DecodedTooLarge>())
}

/// A buffered reader of the decoded content of `path`, and which compression it had. Decoding
/// stops with an error past [`MAX_EXPANSION`] times the compressed size (at least
/// [`MIN_DECODED_CAP`]).
pub fn open_text(path: &Path) -> Result<(Box<dyn BufRead>, Compression)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let compressed = file.metadata().map_or(0, |m| m.len());
    let cap = decoded_cap(compressed);
    let capped = |inner: Box<dyn Read>, kind: &'static str| {
        let message = format!(
            "{}: its {kind} data decode to more than {cap} bytes, over {MAX_EXPANSION}× its \
             {compressed} compressed bytes (the cap is the larger of {MAX_EXPANSION}× and {} \
             MiB): a decompression bomb, or data to decompress yourself and name as a plain file",
            path.display(),
            MIN_DECODED_CAP >> 20
        );
        Capped::new(inner, cap, message)
    };
    let mut raw = BufReader::with_capacity(1 << 20, file);
    let head = raw
        .fill_buf()
        .with_context(|| format!("cannot read {}", path.display()))?;
    let kind = if head.starts_with(GZIP_MAGIC) {
        Compression::Gzip
    } else if head.starts_with(BZIP2_MAGIC) {
        Compression::Bzip2
    } else {
        Compression::None
    };
    let reader: Box<dyn BufRead> = match kind {
        Compression::None => Box::new(raw),
        // Multi-member/multi-stream decoders: parallel compressors write several streams.
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 20,
            capped(Box::new(flate2::bufread::MultiGzDecoder::new(raw)), "gzip"),
        )),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(
            1 << 20,
            capped(Box::new(bzip2::bufread::MultiBzDecoder::new(raw)), "bzip2"),
        )),
    };
    Ok((reader, kind))
}

/// The whole decoded content of `path`. A corrupt or truncated compressed stream is an error
/// naming the file and how many bytes were decoded before it broke.
pub fn read_bytes(path: &Path) -> Result<(Vec<u8>, Compression)> {
    let (mut r, kind) = open_text(path)?;
    let mut out = Vec::new();
    read_up_to(&mut r, u64::MAX, &mut out, path, kind)?;
    Ok((out, kind))
}

/// Append up to `limit` more decoded bytes of `path` to `out`, which holds everything decoded
/// before them (so that its length is the byte offset of a failure); fewer only at the end of
/// the data. Readers use this to never read (or decompress) far past what a header declares.
pub(crate) fn read_up_to(
    r: &mut dyn BufRead,
    limit: u64,
    out: &mut Vec<u8>,
    path: &Path,
    kind: Compression,
) -> Result<()> {
    if let Err(e) = (&mut *r).take(limit).read_to_end(out) {
        if is_cap(&e) {
            anyhow::bail!("{e}");
        }
        let what = match kind {
            Compression::None => {
                return Err(e).context(format!(
                    "{}: cannot read past byte offset {}",
                    path.display(),
                    out.len()
                ))
            }
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
        };
        anyhow::bail!(
            "{}: {what} stream is corrupt or truncated after {} decoded bytes: {e}",
            path.display(),
            out.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// `bytes` zero bytes, compressed by `kind`, in a file of `dir`.
    fn bomb(dir: &Path, kind: Compression, bytes: u64) -> std::path::PathBuf {
        let path = dir.join(format!("{kind:?}.bin"));
        let file = File::create(&path).unwrap();
        let mut w: Box<dyn Write> = match kind {
            Compression::Gzip => Box::new(flate2::write::GzEncoder::new(
                file,
                flate2::Compression::fast(),
            )),
            _ => Box::new(bzip2::write::BzEncoder::new(
                file,
                bzip2::Compression::fast(),
            )),
        };
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..bytes >> 20 {
            w.write_all(&chunk).unwrap();
        }
        drop(w);
        path
    }

    /// A gzip or bzip2 file expanding past the cap is an error naming the file and the cap, not
    /// an abort on the memory it would fill; one within it decodes whole.
    #[test]
    fn abort_decompression_bombs_stop_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [Compression::Gzip, Compression::Bzip2] {
            let path = bomb(dir.path(), kind, MIN_DECODED_CAP + (1 << 20));
            let compressed = std::fs::metadata(&path).unwrap().len();
            assert!(compressed * MAX_EXPANSION < MIN_DECODED_CAP, "{compressed}");
            let (mut r, got) = open_text(&path).unwrap();
            assert_eq!(got, kind);
            let e = std::io::copy(&mut r, &mut std::io::sink()).unwrap_err();
            let text = e.to_string();
            assert!(is_cap(&e), "{text}");
            assert!(
                text.contains(&path.display().to_string())
                    && text.contains(&MIN_DECODED_CAP.to_string()),
                "{text}"
            );
            // read_up_to's error is the cap's message, not "corrupt".
            let (mut r, _) = open_text(&path).unwrap();
            let mut out = Vec::new();
            let e = read_up_to(&mut r, u64::MAX, &mut out, &path, kind).unwrap_err();
            assert!(format!("{e:#}").contains("decompression bomb"), "{e:#}");
            assert_eq!(out.len() as u64, MIN_DECODED_CAP);
        }
        // At the cap exactly: every byte, no error.
        let path = bomb(dir.path(), Compression::Gzip, MIN_DECODED_CAP);
        let (mut r, _) = open_text(&path).unwrap();
        let n = std::io::copy(&mut r, &mut std::io::sink()).unwrap();
        assert_eq!(n, MIN_DECODED_CAP);
    }
}
