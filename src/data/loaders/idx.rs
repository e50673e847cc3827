//! IDX files (MNIST, Fashion-MNIST), raw or gzip-compressed.
//!
//! Layout: a big-endian u32 magic — two zero bytes, the element type (0x08 = unsigned byte)
//! and the number of dimensions — then one big-endian u32 per dimension, then the elements.
//! Images are magic 2051 (count × rows × cols), labels magic 2049 (count).

use super::open::{read_bytes, Compression};
use super::{column_major, Labeled};
use anyhow::{bail, Result};
use ndarray::Array2;
use std::path::Path;

/// Magic of an image file: unsigned bytes, 3 dimensions.
pub const IMAGES_MAGIC: u32 = 0x0803;
/// Magic of a label file: unsigned bytes, 1 dimension.
pub const LABELS_MAGIC: u32 = 0x0801;

/// Images as columns: (rows·cols) × count, pixel values 0..255 as f64, each image's pixels in
/// row-major order (the file's order).
pub fn read_images(path: &Path) -> Result<Array2<f64>> {
    let (bytes, kind) = read_bytes(path)?;
    let (dims, data) = parse(&bytes, IMAGES_MAGIC, path, kind)?;
    let (count, pixels) = (dims[0], dims[1] * dims[2]);
    column_major(pixels, count, data.iter().map(|&b| f64::from(b)).collect())
}

/// One label per item, 0..255.
pub fn read_labels(path: &Path) -> Result<Vec<u32>> {
    let (bytes, kind) = read_bytes(path)?;
    let (_, data) = parse(&bytes, LABELS_MAGIC, path, kind)?;
    Ok(data.iter().map(|&b| u32::from(b)).collect())
}

/// An image file and its label file; their counts must agree.
pub fn read_pair(images: &Path, labels: &Path) -> Result<Labeled> {
    let x = read_images(images)?;
    let labels_v = read_labels(labels)?;
    if x.ncols() != labels_v.len() {
        bail!(
            "{} holds {} images but {} holds {} labels",
            images.display(),
            x.ncols(),
            labels.display(),
            labels_v.len()
        );
    }
    Ok(Labeled {
        x,
        labels: labels_v,
    })
}

/// Check the header against `magic` and return the dimensions and the element bytes.
fn parse<'a>(
    bytes: &'a [u8],
    magic: u32,
    path: &Path,
    kind: Compression,
) -> Result<(Vec<usize>, &'a [u8])> {
    let at = kind.offsets_note();
    let what = if magic == IMAGES_MAGIC {
        "image"
    } else {
        "label"
    };
    let name = path.display();
    let Some(head) = bytes.get(..4) else {
        bail!(
            "{name}: truncated at byte offset {}{at}: an IDX file starts with a 4-byte magic number",
            bytes.len()
        );
    };
    let found = u32::from_be_bytes(head.try_into().expect("4 bytes"));
    if found != magic {
        bail!(
            "{name}: byte offset 0{at}: magic number {found} (0x{found:08x}) is not that of an \
             IDX {what} file ({magic}, 0x{magic:08x})"
        );
    }
    let ndims = (magic & 0xff) as usize;
    let header = 4 + 4 * ndims;
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
    // u32 dimensions multiply within u64, hence within usize on 64-bit targets.
    let need = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let Some(need) = need else {
        bail!("{name}: dimensions {dims:?} are too large");
    };
    let have = bytes.len() - header;
    if have < need {
        bail!(
            "{name}: truncated at byte offset {}{at}: the header declares {} {what}s {}, which \
             need {need} data bytes after the {header}-byte header, but only {have} follow",
            bytes.len(),
            dims[0],
            shape_words(&dims)
        );
    }
    if have > need {
        bail!(
            "{name}: {} unexpected bytes after the last {what}, from byte offset {}{at}",
            have - need,
            header + need
        );
    }
    Ok((dims, &bytes[header..]))
}

fn shape_words(dims: &[usize]) -> String {
    match dims {
        [_, r, c] => format!("of {r}×{c} pixels"),
        _ => String::new(),
    }
}
