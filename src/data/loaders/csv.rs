//! Numeric CSV: one sample per line, a header line optional, one column optionally the label;
//! plain, gzip or bzip2 (detected by magic bytes).

use super::open::open_text;
use super::{column_major, Growth, Labeled};
use anyhow::{bail, Result};
use std::path::Path;

/// Whether the first line names the columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Header {
    /// A header if a field of the first line that should hold a number (or a label) does not.
    #[default]
    Auto,
    Present,
    Absent,
}

/// Which column holds the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LabelColumn {
    /// No label column: every sample gets label 0.
    #[default]
    None,
    First,
    Last,
    /// 0-based column number.
    Index(usize),
}

#[derive(Debug, Clone, Default)]
pub struct CsvOptions {
    pub header: Header,
    pub label: LabelColumn,
    /// 0-based columns to ignore (an ID column, say).
    pub skip: Vec<usize>,
    /// Labels given as text and their class number (e.g. UCI WDBC's `M` → 0, `B` → 1); empty:
    /// labels must be non-negative integers.
    pub label_names: Vec<(String, u32)>,
    /// Field separator; b',' by default (when 0).
    pub delimiter: u8,
}

/// Longest line read: the CSV reader holds a whole record (its bytes and 8 bytes per field), so
/// a file without newlines would be read whole into one.
const MAX_LINE: u64 = 256 << 20;

/// A reader that fails once a line runs past [`MAX_LINE`] bytes.
struct LineCap<R> {
    inner: R,
    /// Bytes since the last newline.
    run: u64,
}

impl<R: std::io::Read> std::io::Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n];
        let longest = match (
            got.iter().position(|&b| b == b'\n'),
            got.iter().rposition(|&b| b == b'\n'),
        ) {
            (Some(first), Some(last)) => {
                let before = self.run + first as u64;
                self.run = (n - last - 1) as u64;
                before.max(self.run)
            }
            _ => {
                self.run += n as u64;
                self.run
            }
        };
        if longest > MAX_LINE {
            return Err(std::io::Error::other(format!(
                "a line longer than {MAX_LINE} bytes ({} MiB): not a CSV of numbers",
                MAX_LINE >> 20
            )));
        }
        Ok(n)
    }
}

/// Read a CSV file: samples become columns of a features × samples matrix.
pub fn read_csv(path: &Path, opts: &CsvOptions) -> Result<Labeled> {
    let name = path.display();
    let (reader, kind) = open_text(path)?;
    let reader = LineCap {
        inner: reader,
        run: 0,
    };
    let note = kind.offsets_note();
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(false)
        // Ragged rows are reported by us with their line, not rejected by the reader.
        .flexible(true)
        .delimiter(if opts.delimiter == 0 {
            b','
        } else {
            opts.delimiter
        })
        .from_reader(reader);
    let mut record = ::csv::ByteRecord::new();
    let mut data = Vec::new();
    let mut labels = Vec::new();
    let mut width: Option<(usize, u64)> = None; // fields per row, and the line that set it
    let mut first = true;
    let mut features = 0;
    let mut growth = Growth::new();
    loop {
        let more = rdr.read_byte_record(&mut record).map_err(|e| {
            let at = e
                .position()
                .map(|p| format!("line {}, byte offset {}{note}: ", p.line(), p.byte()))
                .unwrap_or_default();
            anyhow::anyhow!("{name}: {at}{e}")
        })?;
        if !more {
            break;
        }
        let (line, byte) = record.position().map_or((0, 0), |p| (p.line(), p.byte()));
        if first {
            first = false;
            let is_header = match opts.header {
                Header::Present => true,
                Header::Absent => false,
                Header::Auto => looks_like_header(&record, opts),
            };
            if is_header {
                continue;
            }
        }
        match width {
            None => {
                let label_col = label_index(opts.label, record.len());
                if let Some(c) = label_col.filter(|&c| c >= record.len()) {
                    // Columns are numbered from 1 in manifests and messages, 0 here.
                    bail!(
                        "{name}: line {line}: label column {} but only {} fields",
                        c + 1,
                        record.len()
                    );
                }
                features = (0..record.len())
                    .filter(|c| Some(*c) != label_col && !opts.skip.contains(c))
                    .count();
                if features == 0 {
                    bail!("{name}: line {line}: no feature columns left");
                }
                if let Some(c) = opts.skip.iter().find(|&&c| c >= record.len()) {
                    bail!(
                        "{name}: line {line}: skipped column {c} but only {} fields",
                        record.len()
                    );
                }
                if label_col.is_some_and(|c| opts.skip.contains(&c)) {
                    bail!("{name}: line {line}: the label column is also skipped");
                }
                width = Some((record.len(), line));
            }
            Some((w, at)) if record.len() != w => bail!(
                "{name}: line {line}, byte offset {byte}{note}: {} fields, but line {at} has {w}",
                record.len()
            ),
            Some(_) => {}
        }
        let label_col = label_index(opts.label, record.len());
        for (c, field) in record.iter().enumerate() {
            if opts.skip.contains(&c) {
                continue;
            }
            if Some(c) == label_col {
                labels.push(parse_label(field, opts).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{name}: line {line}, column {}: label `{}` is not {}",
                        c + 1,
                        crate::util::excerpt(field),
                        if opts.label_names.is_empty() {
                            "a non-negative integer".to_string()
                        } else {
                            format!(
                                "one of {}",
                                opts.label_names
                                    .iter()
                                    .map(|(s, _)| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        }
                    )
                })?);
                continue;
            }
            data.push(parse_number(field).ok_or_else(|| {
                anyhow::anyhow!(
                    "{name}: line {line}, column {}: `{}` is not a finite number",
                    c + 1,
                    crate::util::excerpt(field)
                )
            })?);
        }
        if label_col.is_none() {
            labels.push(0);
        }
        // The values twice: the vector may double as it grows, and the matrix is copied once
        // into features × samples order.
        growth.check(16 * data.len() as u128 + 4 * labels.len() as u128, || {
            format!(
                "{name}: line {line}: the {} numbers read up to here",
                data.len()
            )
        })?;
    }
    if width.is_none() {
        if first {
            bail!("{name}: line 1: empty file: expected rows of numbers");
        }
        bail!("{name}: no data rows after the header line");
    }
    let m = labels.len();
    if let Some(c) = label_index(opts.label, width.map_or(0, |w| w.0)) {
        check_classes(&labels, &name.to_string(), c)?;
    }
    Ok(Labeled {
        x: column_major(features, m, data)?,
        labels,
    })
}

/// Class labels repeat: a column where more than half the samples (of 20 or more) have a label
/// of their own is a feature or an index chosen by mistake (a continuous one is refused
/// earlier, as not an integer), and would split the data into one-sample classes.
fn check_classes(labels: &[u32], name: &str, col: usize) -> Result<()> {
    let distinct = labels
        .iter()
        .collect::<std::collections::HashSet<_>>()
        .len();
    if labels.len() >= 20 && 2 * distinct > labels.len() {
        bail!(
            "{name}: label column {}: {distinct} distinct labels among {} samples: not class labels (a feature or an index column?); choose another label_column, or none",
            col + 1,
            labels.len()
        );
    }
    Ok(())
}

fn label_index(label: LabelColumn, fields: usize) -> Option<usize> {
    match label {
        LabelColumn::None => None,
        LabelColumn::First => Some(0),
        LabelColumn::Last => fields.checked_sub(1),
        LabelColumn::Index(c) => Some(c),
    }
}

/// Auto-detection: a header if some field that should hold a number (or a label name) does
/// not. Any number counts here, `nan`, `inf` and `-1` included, so a first data row holding
/// one is rejected with its line rather than silently dropped as a header.
fn looks_like_header(record: &::csv::ByteRecord, opts: &CsvOptions) -> bool {
    let label_col = label_index(opts.label, record.len());
    let number = |f: &[u8]| std::str::from_utf8(f).is_ok_and(|s| s.trim().parse::<f64>().is_ok());
    record.iter().enumerate().any(|(c, f)| {
        if opts.skip.contains(&c) {
            false
        } else if Some(c) == label_col {
            !number(f) && parse_label(f, opts).is_none()
        } else {
            !number(f)
        }
    })
}

fn parse_number(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field)
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn parse_label(field: &[u8], opts: &CsvOptions) -> Option<u32> {
    let s = std::str::from_utf8(field).ok()?.trim();
    if opts.label_names.is_empty() {
        let v = s.parse::<f64>().ok()?;
        (v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v)).then_some(v as u32)
    } else {
        opts.label_names
            .iter()
            .find(|(n, _)| n == s)
            .map(|&(_, k)| k)
    }
}
