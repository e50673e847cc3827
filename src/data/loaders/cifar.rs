//! CIFAR binary version: fixed-size records, no header.
//!
//! CIFAR-10: 3073-byte records, a label byte (0..9) then 3072 pixels. CIFAR-100: 3074-byte
//! records, a coarse label (0..19), a fine label (0..99), then 3072 pixels. Pixels are 1024 red,
//! 1024 green, 1024 blue, each channel a 32×32 image in row-major order; we keep that order.

use super::open::read_bytes;
use super::{Labeled, LabeledBytes};
use anyhow::{bail, Result};
use std::path::Path;

/// Pixels per image: 32 × 32 × 3 channels.
pub const PIXELS: usize = 3072;

/// Which CIFAR-100 label to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cifar100Label {
    /// One of 20 superclasses.
    Coarse,
    /// One of 100 classes.
    Fine,
}

/// One CIFAR-10 batch file (e.g. data_batch_1.bin, test_batch.bin).
pub fn read_cifar10(path: &Path) -> Result<Labeled> {
    read_records(path, 1, 0)?.to_labeled()
}

/// CIFAR-10 batch files side by side, in the order given.
pub fn read_cifar10_batches(paths: &[&Path]) -> Result<Labeled> {
    read_cifar10_batches_bytes(paths)?.to_labeled()
}

/// CIFAR-10 batch files side by side, in the order given, pixels as bytes.
pub fn read_cifar10_batches_bytes(paths: &[&Path]) -> Result<LabeledBytes> {
    LabeledBytes::concat(
        paths
            .iter()
            .map(|p| read_records(p, 1, 0))
            .collect::<Result<_>>()?,
    )
}

/// One CIFAR-10 batch file, pixels as bytes.
pub fn read_cifar10_bytes(path: &Path) -> Result<LabeledBytes> {
    read_records(path, 1, 0)
}

/// One CIFAR-100 file (train.bin, test.bin) with the chosen label.
pub fn read_cifar100(path: &Path, label: Cifar100Label) -> Result<Labeled> {
    read_cifar100_bytes(path, label)?.to_labeled()
}

/// One CIFAR-100 file with the chosen label, pixels as bytes.
pub fn read_cifar100_bytes(path: &Path, label: Cifar100Label) -> Result<LabeledBytes> {
    match label {
        Cifar100Label::Coarse => read_records(path, 2, 0),
        Cifar100Label::Fine => read_records(path, 2, 1),
    }
}

/// Records of `label_bytes` labels then PIXELS pixels; `pick` selects the label returned,
/// and every label byte is checked against its range.
fn read_records(path: &Path, label_bytes: usize, pick: usize) -> Result<LabeledBytes> {
    let (bytes, kind) = read_bytes(path)?;
    let at = kind.offsets_note();
    let name = path.display();
    let record = label_bytes + PIXELS;
    if bytes.is_empty() {
        bail!("{name}: empty file: expected {record}-byte records");
    }
    if bytes.len() % record != 0 {
        let whole = bytes.len() / record;
        bail!(
            "{name}: truncated: {} bytes is not a whole number of {record}-byte records; the \
             last record, from byte offset {}{at}, has {} of its {record} bytes",
            bytes.len(),
            whole * record,
            bytes.len() % record
        );
    }
    // Number of classes of each label byte: CIFAR-100's coarse label has 20.
    let limits: &[u32] = if label_bytes == 1 { &[10] } else { &[20, 100] };
    let count = bytes.len() / record;
    let mut labels = Vec::with_capacity(count);
    let mut data = Vec::with_capacity(count * PIXELS);
    for (i, rec) in bytes.chunks_exact(record).enumerate() {
        for (k, &limit) in limits.iter().enumerate() {
            let v = u32::from(rec[k]);
            if v >= limit {
                bail!(
                    "{name}: byte offset {}{at} (record {i}): label {v} is out of range 0..{}",
                    i * record + k,
                    limit - 1
                );
            }
        }
        labels.push(u32::from(rec[pick]));
        data.extend_from_slice(&rec[label_bytes..]);
    }
    Ok(LabeledBytes {
        n: PIXELS,
        bytes: data,
        labels,
    })
}
