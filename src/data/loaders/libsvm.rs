//! LIBSVM / SVMlight text: one sample per line, `label index:value index:value …` with 1-based,
//! increasing feature indices; plain, gzip or bzip2 (detected by magic bytes).
//!
//! Read as a stream straight into [`Csr`] arrays, so memory is proportional to the non-zeros
//! (12 bytes each) whatever the file's size. Labels become u32: non-negative integers are kept,
//! and the binary convention {-1, +1} maps to {0, 1}. `qid:` tokens and `#` comments are
//! skipped; explicit zeros are dropped.

use super::open::{open_text, Compression};
use super::{Csr, Growth, LabeledSparse};
use anyhow::{bail, Result};
use std::io::{BufRead, Read};
use std::path::Path;

/// Feature indices are stored 0-based as u32.
const MAX_FEATURES: u64 = 1 << 32;

/// Longest line read: a file without newlines must not be read whole into one buffer.
const MAX_LINE: u64 = 1 << 30;

/// Read a LIBSVM file. `n_features`: the declared feature count (indices above it are an
/// error); None takes the largest index found.
pub fn read_libsvm(path: &Path, n_features: Option<usize>) -> Result<LabeledSparse> {
    read_libsvm_rows(path, n_features, &|_| true)
}

/// [`read_libsvm`] keeping only the samples `keep` accepts (by index in the file, from 0) in
/// `x`, in file order, and every sample's label: every line is still parsed and checked, and
/// labels mapped as the whole file asks, but the other samples' entries are dropped as soon as
/// they are read (what a rank of the MPI backend holds of a large file).
pub fn read_libsvm_rows(
    path: &Path,
    n_features: Option<usize>,
    keep: &dyn Fn(usize) -> bool,
) -> Result<LabeledSparse> {
    let (mut reader, kind) = open_text(path)?;
    let mut p = Parser {
        path,
        kind,
        keep,
        declared: n_features,
        line_no: 0,
        line_start: 0,
        indptr: vec![0],
        indices: Vec::new(),
        values: Vec::new(),
        labels: Vec::new(),
        max_index: 0,
        first_minus_one: None,
        first_other: None,
    };
    let mut line = Vec::with_capacity(1 << 12);
    let mut growth = Growth::new();
    loop {
        line.clear();
        let n = match (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(n) => n,
            Err(e) => bail!(
                "{}: cannot read past byte offset {}{}: {e}",
                path.display(),
                p.line_start + line.len() as u64,
                kind.offsets_note()
            ),
        };
        if n == 0 {
            break;
        }
        p.line_no += 1;
        if n as u64 > MAX_LINE {
            bail!(p.err(0, format!("line longer than {MAX_LINE} bytes")));
        }
        p.line(&line)?;
        // Non-zeros (12 bytes) and samples (16), twice: vectors may double as they grow.
        let held = 24 * p.values.len() as u128 + 32 * p.labels.len() as u128;
        growth.check(held, || {
            format!(
                "{}: line {}: the {} non-zeros read up to here",
                path.display(),
                p.line_no,
                p.values.len()
            )
        })?;
        p.line_start += n as u64;
    }
    p.finish()
}

struct Parser<'a> {
    path: &'a Path,
    kind: Compression,
    /// Which samples' entries to keep.
    keep: &'a dyn Fn(usize) -> bool,
    declared: Option<usize>,
    line_no: u64,
    /// Byte offset of the current line in the (decoded) content.
    line_start: u64,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    /// Raw integer labels; mapped to u32 once the whole file is known.
    labels: Vec<i64>,
    max_index: u64,
    first_minus_one: Option<u64>,
    first_other: Option<(u64, i64)>,
}

impl Parser<'_> {
    /// An error at byte `col` of the current line.
    fn err(&self, col: usize, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: line {}, byte offset {}{}: {msg}",
            self.path.display(),
            self.line_no,
            self.line_start + col as u64,
            self.kind.offsets_note()
        )
    }

    fn line(&mut self, line: &[u8]) -> Result<()> {
        // SVMlight allows a trailing `# comment`.
        let body = match memchr(b'#', line) {
            Some(k) => &line[..k],
            None => line,
        };
        let mut tokens = Tokens { s: body, pos: 0 };
        let Some((col, label)) = tokens.next() else {
            return Ok(()); // blank line
        };
        self.label(col, label)?;
        let row_start = self.indices.len();
        let mut sorted = true;
        let mut prev = 0u64;
        for (col, tok) in tokens {
            let Some(colon) = memchr(b':', tok) else {
                bail!(self.err(col, format!("`{}` is not index:value", show(tok))));
            };
            let (idx_s, val_s) = (&tok[..colon], &tok[colon + 1..]);
            if idx_s == b"qid" {
                continue;
            }
            let idx = parse_index(idx_s).ok_or_else(|| {
                self.err(col, format!("`{}` is not a feature index", show(idx_s)))
            })?;
            if idx == 0 {
                bail!(self.err(col, "feature index 0: LIBSVM indices start at 1"));
            }
            if let Some(n) = self.declared.filter(|&n| n as u64 <= MAX_FEATURES) {
                if idx > n as u64 {
                    bail!(self.err(
                        col,
                        format!("feature index {idx} is out of range 1..={n} (the declared feature count)")
                    ));
                }
            } else if idx > MAX_FEATURES {
                bail!(self.err(col, format!("feature index {idx} is too large")));
            }
            let val = std::str::from_utf8(val_s)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    self.err(
                        col + colon + 1,
                        format!("`{}` is not a finite number", show(val_s)),
                    )
                })?;
            if idx <= prev {
                sorted = false;
            }
            prev = idx;
            self.max_index = self.max_index.max(idx);
            // Zeros are kept until the row is checked: `3:0 3:1` is a duplicate too.
            self.indices.push((idx - 1) as u32);
            self.values.push(val);
        }
        if !sorted {
            self.sort_row(row_start)?;
        }
        self.drop_zeros(row_start);
        if (self.keep)(self.labels.len() - 1) {
            self.indptr.push(self.indices.len());
        } else {
            self.indices.truncate(row_start);
            self.values.truncate(row_start);
        }
        Ok(())
    }

    /// Explicit zeros are not stored.
    fn drop_zeros(&mut self, start: usize) {
        let mut k = start;
        for j in start..self.values.len() {
            if self.values[j] != 0.0 {
                self.indices[k] = self.indices[j];
                self.values[k] = self.values[j];
                k += 1;
            }
        }
        self.indices.truncate(k);
        self.values.truncate(k);
    }

    /// Files written by other tools may list a sample's features out of order.
    fn sort_row(&mut self, start: usize) -> Result<()> {
        let mut pairs: Vec<(u32, f64)> = self.indices[start..]
            .iter()
            .copied()
            .zip(self.values[start..].iter().copied())
            .collect();
        pairs.sort_unstable_by_key(|&(i, _)| i);
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            bail!(self.err(0, format!("feature index {} appears twice", w[0].0 + 1)));
        }
        for (k, (i, v)) in pairs.into_iter().enumerate() {
            self.indices[start + k] = i;
            self.values[start + k] = v;
        }
        Ok(())
    }

    fn label(&mut self, col: usize, tok: &[u8]) -> Result<()> {
        if memchr(b',', tok).is_some() {
            bail!(self.err(col, format!("multi-label `{}` is not supported", show(tok))));
        }
        let v = std::str::from_utf8(tok)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|v| v.fract() == 0.0 && v.abs() <= f64::from(u32::MAX))
            .ok_or_else(|| {
                self.err(
                    col,
                    format!("label `{}` is not an integer class", show(tok)),
                )
            })? as i64;
        if v < -1 {
            bail!(self.err(
                col,
                format!("label {v}: labels must be non-negative integers or -1/+1")
            ));
        }
        if v == -1 {
            self.first_minus_one.get_or_insert(self.line_no);
        } else if v != 1 && self.first_other.is_none() {
            self.first_other = Some((self.line_no, v));
        }
        self.labels.push(v);
        Ok(())
    }

    fn finish(mut self) -> Result<LabeledSparse> {
        let name = self.path.display();
        if self.labels.is_empty() {
            bail!(
                "{name}: line {}: end of file without a sample{}: expected lines of \
                 `label index:value …`",
                self.line_no + 1,
                if self.line_no == 0 {
                    " (the file is empty)"
                } else {
                    " (only blank or comment lines)"
                }
            );
        }
        if self.declared.is_none() && self.max_index == 0 {
            bail!(
                "{name}: no feature index on any of its {} lines: the number of features is \
                 unknown",
                self.line_no
            );
        }
        if let (Some(minus), Some((line, v))) = (self.first_minus_one, self.first_other) {
            bail!(
                "{name}: labels mix -1 (first on line {minus}) with {v} (line {line}): only \
                 {{-1, +1}} or non-negative integers are supported"
            );
        }
        let labels = if self.first_minus_one.is_some() {
            self.labels.iter().map(|&v| u32::from(v == 1)).collect()
        } else {
            self.labels.iter().map(|&v| v as u32).collect()
        };
        let n_features = self.declared.unwrap_or(self.max_index as usize);
        // Growth by doubling may leave up to half the capacity unused.
        self.indices.shrink_to_fit();
        self.values.shrink_to_fit();
        self.indptr.shrink_to_fit();
        Ok(LabeledSparse {
            x: Csr::from_parts_unchecked(n_features, self.indptr, self.indices, self.values),
            labels,
        })
    }
}

/// Whitespace-separated tokens with their byte column.
struct Tokens<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        let mut i = self.pos;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == s.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() {
            i += 1;
        }
        self.pos = i;
        Some((start, &s[start..i]))
    }
}

fn memchr(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

/// Decimal digits only, no overflow.
fn parse_index(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u64::from(c - b'0'))
    })
}

/// A token for an error message: cut short, control characters escaped.
fn show(s: &[u8]) -> String {
    crate::util::excerpt(s)
}
