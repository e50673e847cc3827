//! Opening data files whatever their compression: gzip and bzip2 are recognised by their
//! magic bytes (not the file name), so a renamed or recompressed file still reads.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

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

/// A buffered reader of the decoded content of `path`, and which compression it had.
pub fn open_text(path: &Path) -> Result<(Box<dyn BufRead>, Compression)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
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
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(
            1 << 20,
            bzip2::bufread::MultiBzDecoder::new(raw),
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
