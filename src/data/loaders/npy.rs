//! NumPy .npy files (format versions 1.0, 2.0, 3.0): a float64 or float32 matrix, C or Fortran
//! order, either byte order; or a vector of integer labels.
//!
//! The header is checked here before ndarray-npy reads the file: magic, version, the header's
//! length against the file's, the nesting of the header text (its parser recurses), the dtype,
//! and shape × item size against the bytes that follow it. So a corrupt or hostile header is an
//! error naming the file and the byte offset or header field, and nothing is allocated beyond
//! what the file holds. Only uncompressed files: offsets are then the file's own.

use anyhow::{anyhow, bail, Context, Result};
use ndarray::{Array2, ArrayD};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyExt, ReadableElement};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";
/// numpy itself refuses headers above 10,000 bytes unless told otherwise; this leaves room.
const MAX_HEADER: u64 = 1 << 20;
/// A real header nests a dict, a tuple and perhaps a dtype list: deeper is not a .npy file,
/// and the recursive header parser must not be handed it.
const MAX_NESTING: usize = 8;

/// What the header says, after the checks against the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// e.g. "<f8", "|u1"; a structured dtype is shown as its Python literal.
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
    /// Byte offset of the first element.
    pub data_offset: u64,
}

impl NpyHeader {
    /// Bytes per element from a simple descr ("<f8" → 8); None for anything else.
    fn item_size(&self) -> Option<u64> {
        let (_, rest) = split_descr(&self.descr)?;
        rest.parse().ok().filter(|&s| s > 0)
    }
}

/// "<f8" → ('f', "8") with any byte-order mark; None for other shapes of descr.
fn split_descr(descr: &str) -> Option<(char, &str)> {
    let body = descr.strip_prefix(['<', '>', '|', '=']).unwrap_or(descr);
    let kind = body.chars().next()?;
    let rest = &body[kind.len_utf8()..];
    (kind.is_ascii_alphabetic() && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then_some((kind, rest))
}

fn shape_text(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// Read and check the header of `path`: everything up to the data, and that the data's length
/// is exactly what the shape and dtype need. Which dtypes and shapes are wanted is the
/// reader's business.
pub fn read_header(path: &Path) -> Result<NpyHeader> {
    let name = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?;
    if !meta.is_file() {
        bail!("{name}: not a regular file");
    }
    let len = meta.len();
    let mut file = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut prefix = Vec::with_capacity(12);
    (&mut file)
        .take(12)
        .read_to_end(&mut prefix)
        .with_context(|| format!("{name}: cannot read the header"))?;
    if !prefix.starts_with(&MAGIC[..prefix.len().min(MAGIC.len())]) || prefix.is_empty() {
        let hint = if prefix.starts_with(&[0x1f, 0x8b]) {
            " (it is gzip-compressed: decompress it first)"
        } else if prefix.starts_with(b"PK") {
            " (it looks like a zip archive, e.g. .npz: save one array with numpy.save)"
        } else {
            ""
        };
        bail!("{name}: byte offset 0: not a .npy file: it does not start with \\x93NUMPY{hint}");
    }
    if prefix.len() < 8 {
        bail!(
            "{name}: truncated at byte offset {}: a .npy file starts with 6 magic bytes and 2 \
             version bytes",
            prefix.len()
        );
    }
    let (major, minor) = (prefix[6], prefix[7]);
    let len_bytes = match (major, minor) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        _ => {
            bail!("{name}: byte offset 6: format version {major}.{minor}: expected 1.0, 2.0 or 3.0")
        }
    };
    let start = 8 + len_bytes;
    if prefix.len() < start {
        bail!(
            "{name}: truncated at byte offset {}: version {major}.0 has a {len_bytes}-byte \
             header length at byte offset 8",
            prefix.len()
        );
    }
    prefix.truncate(start);
    let header_len = prefix[8..]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    if header_len > MAX_HEADER {
        bail!(
            "{name}: byte offset 8: header length {header_len} bytes exceeds {MAX_HEADER}: not \
             a plain array's header"
        );
    }
    let data_offset = start as u64 + header_len;
    if data_offset > len {
        bail!(
            "{name}: truncated at byte offset {len}: the header length at byte offset 8 says \
             the header runs to byte offset {data_offset}"
        );
    }
    let mut bytes = prefix;
    // The first read may have taken 2 bytes of a version 1.0 header: read on from `start`.
    file.seek(SeekFrom::Start(start as u64))
        .with_context(|| format!("{name}: cannot read the header"))?;
    (&mut file)
        .take(header_len)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{name}: cannot read the header"))?;
    if (bytes.len() as u64) < data_offset {
        bail!(
            "{name}: truncated at byte offset {}: the header runs to byte offset {data_offset}",
            bytes.len()
        );
    }
    check_nesting(&bytes[start..]).map_err(|at| {
        anyhow!(
            "{name}: byte offset {}: the header nests brackets more than {MAX_NESTING} deep: \
             not a plain array's header",
            start + at
        )
    })?;
    let header = Header::from_reader(&mut bytes.as_slice()).map_err(|e| {
        anyhow!("{name}: header (byte offsets {start}..{data_offset}): cannot parse it: {e}")
    })?;
    let descr = match header.type_descriptor.as_string() {
        Some(s) => s.clone(),
        None => header.type_descriptor.to_string(),
    };
    let h = NpyHeader {
        descr,
        fortran_order: header.layout.is_fortran(),
        shape: header.shape,
        data_offset,
    };
    let Some(item) = h.item_size() else {
        bail!(
            "{name}: header field `descr`: dtype {} is not a plain numeric type: expected \
             float64 ('<f8') or float32 ('<f4') data, or integer labels",
            h.descr
        );
    };
    let need = h
        .shape
        .iter()
        .try_fold(item, |acc, &d| acc.checked_mul(d as u64));
    let Some(need) = need else {
        bail!(
            "{name}: header field `shape`: {} × {item} bytes per element overflows: the file \
             cannot hold it",
            shape_text(&h.shape)
        );
    };
    let have = len - data_offset;
    if have < need {
        bail!(
            "{name}: truncated at byte offset {len}: header field `shape` {} of {} needs {need} \
             data bytes after the {data_offset}-byte header, but only {have} follow",
            shape_text(&h.shape),
            h.descr
        );
    }
    if have > need {
        bail!(
            "{name}: {} unexpected bytes after the data, from byte offset {}: header field \
             `shape` {} of {} needs {need} data bytes",
            have - need,
            data_offset + need,
            shape_text(&h.shape),
            h.descr
        );
    }
    Ok(h)
}

/// Err(offset) of the first bracket nested deeper than [`MAX_NESTING`] (quotes ignored).
fn check_nesting(text: &[u8]) -> std::result::Result<(), usize> {
    let mut depth = 0usize;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The whole array as element type T (the header already checked), with the file named in
/// any error.
fn read_all<T: ReadableElement>(path: &Path) -> Result<ArrayD<T>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    ArrayD::<T>::read_npy(BufReader::with_capacity(1 << 20, file))
        .map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// A 2-D float64 or float32 array as f64, shape as in the file (rows × columns, whatever its
/// memory order). Non-finite entries are an error naming the element and its byte offset.
pub fn read_matrix(path: &Path) -> Result<Array2<f64>> {
    let name = path.display();
    let h = read_header(path)?;
    if h.shape.len() != 2 {
        bail!(
            "{name}: header field `shape`: {} has {} dimensions: expected a 2-D array",
            shape_text(&h.shape),
            h.shape.len()
        );
    }
    if h.shape.contains(&0) {
        bail!(
            "{name}: header field `shape`: {} is empty: expected at least one row and one column",
            shape_text(&h.shape)
        );
    }
    // The file's elements, as f64, and one copy in features × samples order (read_header checked
    // that the product does not overflow).
    let elements = h.shape.iter().map(|&d| d as u128).product::<u128>();
    let item = u128::from(h.item_size().unwrap_or(8));
    super::fits(elements * (item + 16), || {
        format!(
            "{name}: header field `shape` {} of {}: its elements as f64 (and a copy)",
            shape_text(&h.shape),
            h.descr
        )
    })?;
    let a: ArrayD<f64> = match h.descr.as_str() {
        "<f8" | ">f8" => read_all::<f64>(path)?,
        "<f4" | ">f4" => read_all::<f32>(path)?.mapv(f64::from),
        _ => bail!(
            "{name}: header field `descr`: dtype '{}' is not supported: expected float64 \
             ('<f8') or float32 ('<f4'), e.g. numpy.save(path, x.astype(numpy.float64))",
            h.descr
        ),
    };
    let a = a
        .into_dimensionality::<ndarray::Ix2>()
        .map_err(|e| anyhow!("{name}: internal error: {e}"))?;
    if let Some(((i, j), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        let (rows, cols) = a.dim();
        let k = if h.fortran_order {
            j * rows + i
        } else {
            i * cols + j
        };
        let item = h.item_size().unwrap_or(8);
        bail!(
            "{name}: byte offset {}: element ({i}, {j}) is {v}: expected finite numbers",
            h.data_offset + k as u64 * item
        );
    }
    Ok(a)
}

/// A vector of integer labels: shape (k,), (k, 1) or (1, k); any integer dtype, or a float
/// dtype holding whole numbers.
pub fn read_label_values(path: &Path) -> Result<Vec<i64>> {
    let name = path.display();
    let h = read_header(path)?;
    let vector = match h.shape.as_slice() {
        [_] => true,
        [a, b] => *a == 1 || *b == 1,
        _ => false,
    };
    if !vector {
        bail!(
            "{name}: header field `shape`: {} is not a vector: expected one label per sample, \
             shape (m,)",
            shape_text(&h.shape)
        );
    }
    // The file's elements and the i64 labels made of them.
    let elements = h.shape.iter().map(|&d| d as u128).product::<u128>();
    let item = u128::from(h.item_size().unwrap_or(8));
    super::fits(elements * (item + 8), || {
        format!(
            "{name}: header field `shape` {} of {}: its labels",
            shape_text(&h.shape),
            h.descr
        )
    })?;
    let bad = |k: usize, v: String| {
        anyhow!("{name}: element {k}: label {v} is not an integer in the range of i64")
    };
    fn ints<T: ReadableElement + Copy>(
        path: &Path,
        conv: impl Fn(T) -> Option<i64>,
        bad: impl Fn(usize, String) -> anyhow::Error,
        show: impl Fn(T) -> String,
    ) -> Result<Vec<i64>> {
        read_all::<T>(path)?
            .iter()
            .enumerate()
            .map(|(k, &v)| conv(v).ok_or_else(|| bad(k, show(v))))
            .collect()
    }
    let whole = |v: f64| (v.fract() == 0.0 && v.abs() < 9.0e18).then_some(v as i64);
    match split_descr(&h.descr) {
        Some(('i', "1")) => ints::<i8>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('i', "2")) => ints::<i16>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('i', "4")) => ints::<i32>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('i', "8")) => ints::<i64>(path, Some, bad, |v| v.to_string()),
        Some(('u', "1")) => ints::<u8>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('u', "2")) => ints::<u16>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('u', "4")) => ints::<u32>(path, |v| Some(v.into()), bad, |v| v.to_string()),
        Some(('u', "8")) => ints::<u64>(path, |v| i64::try_from(v).ok(), bad, |v| v.to_string()),
        Some(('f', "8")) => ints::<f64>(path, whole, bad, |v| v.to_string()),
        Some(('f', "4")) => ints::<f32>(path, |v| whole(v.into()), bad, |v| v.to_string()),
        _ => bail!(
            "{name}: header field `descr`: dtype '{}' is not supported for labels: expected an \
             integer dtype (e.g. '<i8') or whole numbers as float64",
            h.descr
        ),
    }
}
