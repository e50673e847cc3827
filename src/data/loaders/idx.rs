//! IDX files (MNIST, Fashion-MNIST), raw or gzip-compressed.
//!
//! Layout: a big-endian u32 magic — two zero bytes, the element type (0x08 = unsigned byte)
//! and the number of dimensions — then one big-endian u32 per dimension, then the elements.
//! Images are magic 2051 (count × rows × cols), labels magic 2049 (count).

use super::open::{open_text, read_up_to, Compression};
use super::{column_major, Labeled, LabeledBytes};
use anyhow::{bail, Context, Result};
use ndarray::Array2;
use std::io::Read;
use std::path::Path;

/// Magic of an image file: unsigned bytes, 3 dimensions.
pub const IMAGES_MAGIC: u32 = 0x0803;
/// Magic of a label file: unsigned bytes, 1 dimension.
pub const LABELS_MAGIC: u32 = 0x0801;

/// Images as columns: (rows·cols) × count, pixel values 0..255 as f64, each image's pixels in
/// row-major order (the file's order).
pub fn read_images(path: &Path) -> Result<Array2<f64>> {
    let (dims, data) = read_idx(path, IMAGES_MAGIC)?;
    let (count, pixels) = (dims[0], dims[1] * dims[2]);
    column_major(pixels, count, data.iter().map(|&b| f64::from(b)).collect())
}

/// One label per item, 0..255.
pub fn read_labels(path: &Path) -> Result<Vec<u32>> {
    let (_, data) = read_idx(path, LABELS_MAGIC)?;
    Ok(data.iter().map(|&b| u32::from(b)).collect())
}

/// An image file and its label file; their counts must agree.
pub fn read_pair(images: &Path, labels: &Path) -> Result<Labeled> {
    read_pair_bytes(images, labels)?.to_labeled()
}

/// [`read_pair`] with the pixels as bytes (each image's pixels contiguous, as in the file).
pub fn read_pair_bytes(images: &Path, labels: &Path) -> Result<LabeledBytes> {
    let (dims, bytes) = read_idx(images, IMAGES_MAGIC)?;
    let labels_v = read_labels(labels)?;
    if dims[0] != labels_v.len() {
        bail!(
            "{} holds {} images but {} holds {} labels",
            images.display(),
            dims[0],
            labels.display(),
            labels_v.len()
        );
    }
    Ok(LabeledBytes {
        n: dims[1] * dims[2],
        bytes,
        labels: labels_v,
    })
}

/// Read the header, check it against `magic` and the file's length, then read the elements:
/// the dimensions and the element bytes. The header is untrusted: the data is never read (nor
/// decompressed) past what it declares, and nothing is allocated from it alone.
fn read_idx(path: &Path, magic: u32) -> Result<(Vec<usize>, Vec<u8>)> {
    let (_, dims, bytes) = read_raw(path, Some(magic))?;
    Ok((dims, bytes))
}

/// Element types of the IDX format: type code, bytes per element, name.
const TYPES: [(u8, usize, &str); 6] = [
    (0x08, 1, "unsigned byte"),
    (0x09, 1, "signed byte"),
    (0x0B, 2, "16-bit integer"),
    (0x0C, 4, "32-bit integer"),
    (0x0D, 4, "32-bit float"),
    (0x0E, 8, "64-bit float"),
];

/// A matrix of any element type, with 2 to 4 dimensions: the first counts rows, the others are
/// flattened into columns (row-major, the file's order). Returned as rows × columns.
pub fn read_matrix(path: &Path) -> Result<Array2<f64>> {
    let (code, dims, bytes) = read_raw(path, None)?;
    let cols: usize = dims[1..].iter().product();
    let item = TYPES.iter().find(|t| t.0 == code).map_or(1, |t| t.1);
    let values: Vec<f64> = bytes
        .chunks_exact(item)
        .map(|c| match code {
            0x08 => f64::from(c[0]),
            0x09 => f64::from(c[0] as i8),
            0x0B => f64::from(i16::from_be_bytes([c[0], c[1]])),
            0x0C => f64::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]])),
            0x0D => f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]])),
            _ => f64::from_be_bytes(c.try_into().expect("8 bytes")),
        })
        .collect();
    if let Some(k) = values.iter().position(|v| !v.is_finite()) {
        bail!(
            "{}: byte offset {}: element {k} (row {}) is {}: expected finite numbers",
            path.display(),
            4 + 4 * dims.len() + k * item,
            k / cols,
            values[k]
        );
    }
    // Row-major rows × cols is column-major cols × rows: build that, then view it transposed.
    Ok(column_major(cols, dims[0], values)?.reversed_axes())
}

/// The header and element bytes of an IDX file: with `magic`, exactly that magic (unsigned
/// bytes); without, any element type of [`TYPES`] and 2 to 4 dimensions.
fn read_raw(path: &Path, magic: Option<u32>) -> Result<(u8, Vec<usize>, Vec<u8>)> {
    let (mut r, kind) = open_text(path)?;
    let at = kind.offsets_note();
    let what = match magic {
        Some(IMAGES_MAGIC) => "image",
        Some(_) => "label",
        None => "row",
    };
    let name = path.display();
    let mut bytes = Vec::with_capacity(16);
    read_up_to(&mut r, 4, &mut bytes, path, kind)?;
    let Ok(head) = <[u8; 4]>::try_from(bytes.as_slice()) else {
        bail!(
            "{name}: truncated at byte offset {}{at}: an IDX file starts with a 4-byte magic number",
            bytes.len()
        );
    };
    let found = u32::from_be_bytes(head);
    let (code, ndims) = (head[2], usize::from(head[3]));
    let item = match magic {
        Some(magic) if found != magic => bail!(
            "{name}: byte offset 0{at}: magic number {found} (0x{found:08x}) is not that of an \
             IDX {what} file ({magic}, 0x{magic:08x})"
        ),
        Some(_) => 1,
        None if head[..2] != [0, 0] => bail!(
            "{name}: byte offset 0{at}: magic number 0x{found:08x} does not start with two zero \
             bytes: not an IDX file"
        ),
        None => {
            let Some(&(_, item, _)) = TYPES.iter().find(|t| t.0 == code) else {
                bail!(
                    "{name}: byte offset 2{at}: element type 0x{code:02x} is not an IDX type \
                     (0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E)"
                );
            };
            if !(2..=4).contains(&ndims) {
                bail!(
                    "{name}: byte offset 3{at}: {ndims} dimensions: expected 2 to 4 (rows, \
                     then the dimensions of each row)"
                );
            }
            item
        }
    };
    let header = 4 + 4 * ndims;
    read_up_to(&mut r, 4 * ndims as u64, &mut bytes, path, kind)?;
    if bytes.len() < header {
        bail!(
            "{name}: truncated at byte offset {}{at}: the header needs {header} bytes \
             ({ndims} dimension sizes)",
            bytes.len()
        );
    }
    let dims: Vec<usize> = bytes[4..header]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("4 bytes")) as usize)
        .collect();
    if let Some(k) = dims.iter().position(|&d| d == 0) {
        bail!(
            "{name}: byte offset {}{at}: {} is 0; expected at least 1",
            4 + 4 * k,
            dim_words(what, k)
        );
    }
    // Data bytes and file size the header declares, in checked arithmetic: it is untrusted.
    let sizes = dims
        .iter()
        .try_fold(item, |acc, &d| acc.checked_mul(d))
        .and_then(|need| Some((need, need.checked_add(header)? as u64)));
    let Some((need, want)) = sizes else {
        bail!("{name}: dimensions {dims:?} are too large");
    };
    let truncated = |end: u64| {
        anyhow::anyhow!(
            "{name}: truncated at byte offset {end}{at}: the header declares {} {what}s{}, \
             which need {need} data bytes after the {header}-byte header, but only {} follow",
            dims[0],
            shape_words(&dims),
            end - header as u64
        )
    };
    let trailing = |extra: String| {
        anyhow::anyhow!(
            "{name}: {extra} unexpected bytes after the last {what}, from byte offset {want}{at}"
        )
    };
    if kind == Compression::None {
        // The header's claim against the file's length, before reading or allocating.
        let len = std::fs::metadata(path)
            .with_context(|| format!("cannot read {name}"))?
            .len();
        if len < want {
            return Err(truncated(len));
        }
        if len > want {
            return Err(trailing((len - want).to_string()));
        }
        bytes.reserve_exact(need);
    }
    // The element bytes, and the f64 matrix made of them with one copy (8 bytes twice), against
    // the memory budget before they are read (after the file's length, the more exact check).
    let elements = (need / item) as u128;
    super::fits(need as u128 + 16 * elements, || {
        format!("{name}: the header's dimensions {dims:?}: its elements as f64 (and a copy)")
    })?;
    // One byte more than declared tells a longer stream; growth follows the real data.
    read_up_to(
        &mut r,
        (need as u64).saturating_add(1),
        &mut bytes,
        path,
        kind,
    )?;
    let got = bytes.len() as u64;
    if got < want {
        return Err(truncated(got));
    }
    if got > want {
        // Count what follows, within reason: a decompression bomb is not worth expanding.
        const CAP: u64 = 1 << 20;
        let more = std::io::copy(&mut (&mut r).take(CAP), &mut std::io::sink()).unwrap_or(0);
        return Err(trailing(if more < CAP {
            (more + 1).to_string()
        } else {
            format!("more than {CAP}")
        }));
    }
    bytes.drain(..header);
    Ok((code, dims, bytes))
}

fn dim_words(what: &str, k: usize) -> &'static str {
    match (what, k) {
        ("image", 1) => "the number of pixel rows",
        ("image", 2) => "the number of pixel columns",
        ("image", _) => "the number of images",
        ("row", 0) => "the number of rows",
        ("row", _) => "a dimension of the rows",
        _ => "the number of labels",
    }
}

fn shape_words(dims: &[usize]) -> String {
    match dims {
        [_, r, c] => format!(" of {r}×{c} pixels"),
        _ => String::new(),
    }
}
