//! A researcher's own data file: `[data] source = "x.csv"` (generator "file"), in CSV, LIBSVM,
//! IDX or NumPy .npy, samples as rows (default) or columns, optionally with labels.
//!
//! [`resolve`] runs when the manifest loads: it finds the files (relative to the manifest's
//! folder), hashes them (checked against `sha256` / `labels_sha256` when given, and written into
//! the spec so that fingerprints and cache keys follow the content), reads the data once to learn
//! n and m (checked when given) and checks the labels' count. [`file_matrix`] reads it again at
//! run time, after checking that the digest has not changed since.

use super::fetch::sha256_file;
use super::loaders::{csv, idx, libsvm, npy, open_text};
use super::matrix::DataMatrix;
use super::prepare::{preprocess, KeyMismatch};
use crate::linalg::to_f_order;
use crate::spec::{DataSpec, File, FileFormat, FilePaths, Gen, Orientation, Preprocess};
use anyhow::{bail, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::Path;

fn mismatch(key: &'static str, message: String) -> KeyMismatch {
    KeyMismatch { key, message }
}

/// The format a file name implies, looking through a .gz or .bz2 ending.
pub fn infer_format(path: &Path) -> Option<FileFormat> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".bz2"))
        .unwrap_or(&name);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    Some(match ext {
        "csv" => FileFormat::Csv,
        "libsvm" | "svm" | "svmlight" => FileFormat::Libsvm,
        "npy" => FileFormat::Npy,
        "idx" => FileFormat::Idx,
        // MNIST's own names: train-images-idx3-ubyte.
        _ if name.ends_with("-ubyte") || ext.ends_with("-ubyte") => FileFormat::Idx,
        _ => return None,
    })
}

/// A data file's format: `format` if given, else what the name of `source` implies.
pub fn file_format(f: &File) -> Option<FileFormat> {
    f.format.or_else(|| infer_format(Path::new(&f.source)))
}

/// A 64-digit hex digest, lowercased; None for anything else.
fn normal_digest(s: &str) -> Option<String> {
    (s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s.to_ascii_lowercase())
}

/// `file`'s digest, checked against `expected` (the manifest's `key`) when given.
fn digest(path: &Path, expected: Option<&str>, key: &'static str) -> Result<String, KeyMismatch> {
    let actual = sha256_file(path).map_err(|e| mismatch(key, format!("{e:#}")))?;
    if let Some(want) = expected {
        let Some(want) = normal_digest(want) else {
            return Err(mismatch(
                key,
                format!("{want:?} is not a SHA-256: expected 64 hexadecimal digits"),
            ));
        };
        if want != actual {
            return Err(mismatch(
                key,
                format!(
                    "{}: SHA-256 mismatch: the manifest expects {want}, the file's is {actual} \
                     (the file changed, or the checksum is wrong)",
                    path.display()
                ),
            ));
        }
    }
    Ok(actual)
}

/// Which keys go with which format and orientation.
fn check_options(f: &File, format: FileFormat) -> Result<(), KeyMismatch> {
    let columns = f.orientation == Some(Orientation::Columns);
    if format != FileFormat::Csv {
        for (key, set) in [
            ("data.header", f.header.is_some()),
            ("data.label_column", f.label_column.is_some()),
        ] {
            if set {
                return Err(mismatch(
                    key,
                    format!("only used with format = \"csv\", not \"{format}\": remove it (a labels file goes in `labels`)"),
                ));
            }
        }
    }
    if format == FileFormat::Libsvm {
        if columns {
            return Err(mismatch(
                "data.orientation",
                "a LIBSVM file holds one sample per line: orientation must be \"rows\"".into(),
            ));
        }
        if f.labels.is_some() {
            return Err(mismatch(
                "data.labels",
                "a LIBSVM file carries its own labels (the first field of each line): remove it"
                    .into(),
            ));
        }
    }
    match f.label_column {
        Some(0) => Err(mismatch(
            "data.label_column",
            "label_column = 0: columns are numbered from 1".into(),
        )),
        Some(_) if columns => Err(mismatch(
            "data.label_column",
            "with orientation = \"columns\" a label column would be a label row: put the labels \
             in a file of their own (`labels`)"
                .into(),
        )),
        Some(_) if f.labels.is_some() => Err(mismatch(
            "data.labels",
            "labels come from label_column already: keep one of the two".into(),
        )),
        _ => Ok(()),
    }
}

/// `name` (the manifest's `key`) relative to `base`: a regular file (a device, a FIFO or a folder
/// would block or never end a read), followed through symlinks.
fn regular_file(
    base: &Path,
    name: &str,
    key: &'static str,
) -> Result<std::path::PathBuf, KeyMismatch> {
    let path = base.join(name);
    let meta = std::fs::metadata(&path)
        .map_err(|e| mismatch(key, format!("{}: cannot read: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(mismatch(
            key,
            format!("{}: not a regular file", path.display()),
        ));
    }
    Ok(path)
}

/// Fill in what the files decide; `base` is the manifest's folder. Errors name the key.
pub fn resolve(spec: &mut DataSpec, base: &Path) -> Result<(), KeyMismatch> {
    let (n0, m0) = (spec.n, spec.m);
    let Gen::File(f) = &mut spec.gen else {
        return Ok(());
    };
    let data = regular_file(base, &f.source, "data.source")?;
    let format = match file_format(f) {
        Some(f) => f,
        None => {
            return Err(mismatch(
                "data.format",
                format!(
                    "{}: cannot tell the format from the file name: set format = \"csv\", \
                     \"libsvm\", \"idx\" or \"npy\"",
                    data.display()
                ),
            ))
        }
    };
    check_options(f, format)?;
    f.format = Some(format);
    let labels = match &f.labels {
        Some(l) => Some(regular_file(base, l, "data.labels")?),
        None => None,
    };
    if labels.is_none() && f.labels_sha256.is_some() {
        return Err(mismatch(
            "data.labels_sha256",
            "only used with `labels`: remove it".into(),
        ));
    }
    f.paths = Some(FilePaths {
        data: data.clone(),
        labels: labels.clone(),
    });
    // Read (each reader checks the sizes it meets against the memory budget) before hashing:
    // a file too large for the memory is refused without a pass over all of it.
    let (x, labels_read) = read(f, n0).map_err(|e| match e.downcast::<KeyMismatch>() {
        Ok(k) => k,
        Err(e) => mismatch("data.source", format!("{e:#}")),
    })?;
    f.sha256 = Some(digest(&data, f.sha256.as_deref(), "data.sha256")?);
    if let Some(l) = &labels {
        f.labels_sha256 = Some(digest(l, f.labels_sha256.as_deref(), "data.labels_sha256")?);
    }
    let labels = labels_read;
    if let Some(why) = degenerate(&x, &f.preprocess) {
        return Err(mismatch(
            "data.source",
            format!(
                "{}: {why}: no direction of variance to find",
                data.display()
            ),
        ));
    }
    let noise = f.noise_features.unwrap_or(0);
    let plus = if noise > 0 {
        format!(" + {noise} noise features = {}", x.n() + noise)
    } else {
        String::new()
    };
    let n = x.n() + noise;
    if n0 != 0 && n0 != n {
        return Err(mismatch(
            "data.n",
            format!(
                "data.n = {} but {} has {} features{plus} (samples as {}): set data.n = {n} or \
                 leave it out",
                n0,
                data.display(),
                x.n(),
                f.orientation.unwrap_or_default()
            ),
        ));
    }
    if m0 != 0 && m0 != x.m() {
        return Err(mismatch(
            "data.m",
            format!(
                "data.m = {} but {} has {} samples (samples as {}): set data.m = {} or leave it \
                 out",
                m0,
                data.display(),
                x.m(),
                f.orientation.unwrap_or_default(),
                x.m()
            ),
        ));
    }
    f.content_sha256 = Some(content_digest(&x, labels.as_deref()));
    spec.n = n;
    spec.m = x.m();
    Ok(())
}

/// Why `x` holds nothing to find once `steps` are applied, if so: every entry zero, or every
/// feature constant and then centred. The same rule for every family, at load, rather than a
/// run that ends in NaN (the subspace family) or an error (the eigvec family).
fn degenerate(x: &DataMatrix, steps: &[Preprocess]) -> Option<&'static str> {
    use crate::spec::Preprocess::{Center, Standardize, Zscore};
    match x {
        DataMatrix::Dense(a) => {
            if a.iter().all(|v| *v == 0.0) {
                return Some("every entry is 0");
            }
            let centred = steps
                .iter()
                .any(|s| matches!(s, Center | Standardize | Zscore));
            let constant = a.rows().into_iter().all(|r| r.iter().all(|v| *v == r[0]));
            (centred && constant).then_some("every feature is constant, so centring leaves 0")
        }
        DataMatrix::Sparse(c) => c
            .values()
            .iter()
            .all(|v| *v == 0.0)
            .then_some("every entry is 0"),
        // Never read from a file: centring is implicit only after preprocessing.
        DataMatrix::Centred { .. } => None,
    }
}

/// SHA-256 of a matrix (features × samples, column by column) and its labels: what the runs
/// see, independent of the file's format, orientation and name.
fn content_digest(x: &DataMatrix, labels: Option<&[u32]>) -> String {
    let mut h = Sha256::new();
    // Values go in through a buffer: one update per value is several times slower.
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut put = |h: &mut Sha256, bytes: &[u8]| {
        if buf.len() + bytes.len() > buf.capacity() {
            h.update(&buf);
            buf.clear();
        }
        buf.extend_from_slice(bytes);
    };
    put(&mut h, &(x.n() as u64).to_le_bytes());
    put(&mut h, &(x.m() as u64).to_le_bytes());
    match x {
        DataMatrix::Dense(a) => {
            put(&mut h, b"dense");
            // The transpose's logical order is a's column-major order.
            for v in a.t().iter() {
                put(&mut h, &v.to_bits().to_le_bytes());
            }
        }
        DataMatrix::Sparse(c) | DataMatrix::Centred { x: c, .. } => {
            put(&mut h, b"sparse");
            for &p in c.indptr() {
                put(&mut h, &(p as u64).to_le_bytes());
            }
            for &i in c.indices() {
                put(&mut h, &i.to_le_bytes());
            }
            for v in c.values() {
                put(&mut h, &v.to_bits().to_le_bytes());
            }
            if let DataMatrix::Centred { mean, .. } = x {
                put(&mut h, b"mean");
                for v in mean {
                    put(&mut h, &v.to_bits().to_le_bytes());
                }
            }
        }
    }
    if let Some(l) = labels {
        put(&mut h, b"labels");
        for v in l {
            put(&mut h, &v.to_le_bytes());
        }
    }
    h.update(&buf);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the spec's data carries labels (a label column, a labels file, or LIBSVM).
pub fn labelled(f: &File) -> bool {
    f.label_column.is_some() || f.labels.is_some() || f.format == Some(FileFormat::Libsvm)
}

/// The n×m data matrix of a resolved spec, preprocessed, and its labels if it has any.
pub fn file_matrix(spec: &DataSpec) -> Result<(DataMatrix, Option<Vec<u32>>)> {
    let Gen::File(f) = &spec.gen else {
        bail!(
            "internal error: file_matrix of generator = \"{}\"",
            spec.generator()
        );
    };
    let Some(paths) = &f.paths else {
        bail!("internal error: the data file of generator = \"file\" was not resolved");
    };
    // The manifest's digests go into the run's records: the file must still be that one.
    for (path, want, key) in [
        (Some(&paths.data), &f.sha256, "data.source"),
        (paths.labels.as_ref(), &f.labels_sha256, "data.labels"),
    ] {
        if let (Some(path), Some(want)) = (path, want) {
            if &sha256_file(path)? != want {
                return Err(mismatch(
                    key,
                    format!(
                        "{}: the file changed after the manifest was loaded: run again",
                        path.display()
                    ),
                )
                .into());
            }
        }
    }
    let (mut a, labels) = read(f, spec.n)?;
    let noise = f.noise_features.unwrap_or(0);
    if (a.n() + noise, a.m()) != (spec.n, spec.m) {
        bail!(
            "{}: {} × {} now, {} × {} when the manifest was loaded",
            paths.data.display(),
            a.n() + noise,
            a.m(),
            spec.n,
            spec.m
        );
    }
    preprocess(&mut a, &f.preprocess, &f.source)?;
    Ok((a, labels))
}

/// Read the data (features × samples) and labels of a file whose paths are set; `n` is the
/// manifest's data.n (0 if not given).
fn read(f: &File, n: usize) -> Result<(DataMatrix, Option<Vec<u32>>)> {
    let paths = f.paths.as_ref().expect("resolved");
    let path = &paths.data;
    let columns = f.orientation == Some(Orientation::Columns);
    // Every dense reader yields the file's rows × columns; samples are its rows or columns.
    let orient = |x: ndarray::Array2<f64>| {
        if columns {
            to_f_order(x.view())
        } else {
            to_f_order(x.t())
        }
    };
    let (a, mut labels) = match f.format.expect("resolved") {
        FileFormat::Csv => {
            let opts = csv::CsvOptions {
                header: match f.header {
                    None => csv::Header::Auto,
                    Some(true) => csv::Header::Present,
                    Some(false) => csv::Header::Absent,
                },
                label: f
                    .label_column
                    .map_or(csv::LabelColumn::None, |c| csv::LabelColumn::Index(c - 1)),
                ..Default::default()
            };
            let d = csv::read_csv(path, &opts)?;
            // The reader puts each line in a column: features × samples for "rows" already.
            let a = if columns { to_f_order(d.x.t()) } else { d.x };
            let labels = f.label_column.map(|_| d.labels);
            (DataMatrix::Dense(a), labels)
        }
        FileFormat::Libsvm => {
            // A given n declares the features (trailing ones may be all zero).
            let declared = n
                .checked_sub(f.noise_features.unwrap_or(0))
                .filter(|&d| d > 0);
            let d = libsvm::read_libsvm(path, declared)?;
            (DataMatrix::Sparse(d.x), Some(d.labels))
        }
        FileFormat::Idx => (DataMatrix::Dense(orient(idx::read_matrix(path)?)), None),
        FileFormat::Npy => (DataMatrix::Dense(orient(npy::read_matrix(path)?)), None),
    };
    if let Some(l) = &paths.labels {
        let values = read_labels(l).map_err(|e| mismatch("data.labels", format!("{e:#}")))?;
        if values.len() != a.m() {
            return Err(mismatch(
                "data.labels",
                format!(
                    "{} holds {} labels but {} has {} samples: expected one label per sample",
                    l.display(),
                    values.len(),
                    path.display(),
                    a.m()
                ),
            )
            .into());
        }
        labels = Some(classes(&values));
    }
    Ok((a, labels))
}

/// A labels file: a .npy vector, or text with one integer per line.
pub fn read_labels(path: &Path) -> Result<Vec<i64>> {
    if infer_format(path) == Some(FileFormat::Npy) {
        return npy::read_label_values(path);
    }
    // A label is a short integer: a longer line is not a labels file (a file without newlines
    // must not be read whole into one line).
    const MAX_LINE: u64 = 1 << 10;
    let (mut reader, kind) = open_text(path)?;
    let mut out = Vec::new();
    let mut blank: Option<usize> = None;
    let mut growth = super::loaders::Growth::new();
    let mut line = Vec::new();
    for k in 0.. {
        line.clear();
        let got = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot read line {}{}: {e}",
                    path.display(),
                    k + 1,
                    kind.offsets_note()
                )
            })?;
        if got == 0 {
            break;
        }
        if line.len() as u64 > MAX_LINE {
            bail!(
                "{}: line {} is longer than {MAX_LINE} bytes: expected one integer label per line",
                path.display(),
                k + 1
            );
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        growth.check(16 * out.len() as u128, || {
            format!(
                "{}: line {}: the labels read up to here",
                path.display(),
                k + 1
            )
        })?;
        let text = String::from_utf8_lossy(&line);
        // A byte-order mark (as some editors write) is not part of the first label.
        let t = if k == 0 {
            text.trim_start_matches('\u{feff}')
        } else {
            &text
        }
        .trim();
        if t.is_empty() {
            blank.get_or_insert(k + 1);
            continue;
        }
        if let Some(b) = blank {
            bail!(
                "{}: line {b} is blank but line {} is not: expected one label per line",
                path.display(),
                k + 1
            );
        }
        let v: i64 = t.parse().map_err(|_| {
            anyhow::anyhow!(
                "{}: line {}: `{}` is not an integer label",
                path.display(),
                k + 1,
                crate::util::excerpt(t.as_bytes())
            )
        })?;
        out.push(v);
    }
    if out.is_empty() {
        bail!(
            "{}: no labels: expected one integer per line",
            path.display()
        );
    }
    Ok(out)
}

/// Labels as class numbers 0, 1, … in increasing order of value: a split by label only needs
/// to know which samples share one, so -1/+1 or 3/7 work as well as 0/1.
fn classes(values: &[i64]) -> Vec<u32> {
    let index: BTreeMap<i64, u32> = {
        let mut distinct: Vec<i64> = values.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        distinct.into_iter().zip(0..).collect()
    };
    values.iter().map(|v| index[v]).collect()
}

#[cfg(test)]
mod format_tests {
    use super::file_format;
    use crate::spec::{File, FileFormat};

    /// `format` wins; without it the source's name decides, through a .bz2 ending too.
    #[test]
    fn file_format_comes_from_the_key_or_the_source_name() {
        let spec = |keys: &str| -> File { toml::from_str(keys).unwrap() };
        let svm = spec("source = \"d/x.svm.bz2\"");
        assert_eq!(file_format(&svm), Some(FileFormat::Libsvm));
        let forced = spec("source = \"d/x.svm\"\nformat = \"csv\"");
        assert_eq!(file_format(&forced), Some(FileFormat::Csv));
        assert_eq!(file_format(&spec("source = \"d/x.dat\"")), None);
    }
}
