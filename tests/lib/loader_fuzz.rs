//! Deterministic fuzzing of the five loaders (cargo-fuzz needs nightly): start from a valid
//! crafted file, apply random mutations with a fixed-seed RNG, load it inside `catch_unwind`
//! and require no panic, an error that names the file, or a result that is internally sound.
//!
//! Cases per loader: `DPCA_FUZZ_CASES` (default 1500); `DPCA_FUZZ_SECONDS` stops each loader
//! early; `DPCA_FUZZ_SEED` changes the seed. Case k of a run is reproducible from the seed and
//! k alone. A long run, one loader after the other, printing the counts:
//!
//!     DPCA_FUZZ_CASES=100000000 DPCA_FUZZ_SECONDS=600 cargo test --release --features mpi \
//!         --test lib -- loader_fuzz:: --nocapture --test-threads 1

use dpca_bench::data::loaders::{cifar, csv, idx, libsvm, npy, Csr, Labeled, LabeledSparse};
use ndarray::ShapeBuilder;
use ndarray_npy::WriteNpyExt;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
    })
}

/// Run `case` for each case index: it builds, mutates and loads one file (logging what it
/// did) and returns whether the loader accepted it, or Err for a finding; a panic is a
/// finding too.
fn drive(
    loader: &str,
    case: impl Fn(&mut ChaCha8Rng, &Path, &mut Vec<String>) -> Result<bool, String>,
) {
    let cases = env_num("DPCA_FUZZ_CASES").unwrap_or(1500);
    let deadline = env_num("DPCA_FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let seed = env_num("DPCA_FUZZ_SEED").unwrap_or(0x0dca_f022);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut failures = Vec::new();
    let (mut done, mut accepted) = (0u64, 0u64);
    for k in 0..cases {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let path = dir.path().join(format!("{loader}-fuzz.dat"));
        let mut log = Vec::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| case(&mut rng, &path, &mut log)));
        let finding = match outcome {
            Ok(Ok(ok)) => {
                accepted += u64::from(ok);
                None
            }
            Ok(Err(e)) => Some(e),
            Err(p) => Some(format!(
                "PANIC: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        };
        if let Some(f) = finding {
            failures.push(format!("case {k} [{}]: {f}", log.join("; ")));
        }
        done += 1;
    }
    eprintln!(
        "loader_fuzz {loader}: {done} cases ({accepted} accepted, {} rejected) in {:.1} s, {} \
         failures (seed {seed:#x})",
        done - accepted - failures.len() as u64,
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {done} {loader} cases failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The outcome of one load: an error must name the file; a success is checked by `sound`.
/// Ok(true): accepted, Ok(false): rightly rejected.
fn judge<T>(
    path: &Path,
    valid: bool,
    r: anyhow::Result<T>,
    sound: impl FnOnce(&T) -> Result<(), String>,
) -> Result<bool, String> {
    match r {
        Err(e) => {
            let text = format!("{e:#}");
            if !text.contains(&path.display().to_string()) {
                return Err(format!("error does not name the file: {text}"));
            }
            if valid {
                return Err(format!("valid file rejected: {text}"));
            }
            Ok(false)
        }
        Ok(v) => sound(&v).map(|()| true),
    }
}

fn sound_dense(d: &Labeled) -> Result<(), String> {
    let (n, m) = d.x.dim();
    if n == 0 || m == 0 || d.labels.len() != m {
        return Err(format!("{n}×{m} matrix with {} labels", d.labels.len()));
    }
    if d.x.iter().any(|v| !v.is_finite()) {
        return Err("non-finite value accepted".into());
    }
    Ok(())
}

fn sound_sparse(d: &LabeledSparse) -> Result<(), String> {
    let x = &d.x;
    // Csr::new re-checks every invariant the reader promised.
    Csr::new(
        x.n_features(),
        x.indptr().to_vec(),
        x.indices().to_vec(),
        x.values().to_vec(),
    )
    .map_err(|e| format!("CSR invariants broken: {e}"))?;
    if x.n_samples() == 0 || d.labels.len() != x.n_samples() {
        return Err(format!(
            "{} samples with {} labels",
            x.n_samples(),
            d.labels.len()
        ));
    }
    if x.values().iter().any(|v| !v.is_finite() || *v == 0.0) {
        return Err("non-finite or explicit zero value stored".into());
    }
    Ok(())
}

// ---- mutations ----------------------------------------------------------------------------

/// A header field a mutation may rewrite: byte offset, width in bytes, big-endian.
#[derive(Clone, Copy)]
struct Field {
    at: usize,
    width: usize,
    big_endian: bool,
}

const EXTREMES: &[u64] = &[
    0,
    1,
    2,
    255,
    256,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    1_000_000_000,
    u64::MAX,
];

fn span(rng: &mut ChaCha8Rng, len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    let a = rng.random_range(0..len);
    let n = rng.random_range(1..=(len - a).min(64));
    (a, a + n)
}

/// Byte-level mutations, 1 to 4 of them.
fn mutate_bytes(rng: &mut ChaCha8Rng, b: &mut Vec<u8>, fields: &[Field], log: &mut Vec<String>) {
    for _ in 0..rng.random_range(1..=4) {
        let len = b.len();
        match rng.random_range(0..10) {
            0 | 1 if len > 0 => {
                let at = rng.random_range(0..len);
                let bit = 1u8 << rng.random_range(0..8);
                b[at] ^= bit;
                log.push(format!("flip bit {bit:#x} at {at}"));
            }
            2 => {
                let at = rng.random_range(0..=len);
                let n = rng.random_range(1..=8);
                let junk: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                b.splice(at..at, junk);
                log.push(format!("insert {n} bytes at {at}"));
            }
            3 if len > 0 => {
                let (a, e) = span(rng, len);
                b.drain(a..e);
                log.push(format!("delete {a}..{e}"));
            }
            4 => {
                let to = rng.random_range(0..=len);
                b.truncate(to);
                log.push(format!("truncate to {to}"));
            }
            5 if !fields.is_empty() => {
                let f = *fields.choose(rng).unwrap();
                if f.at + f.width <= len {
                    let v = if rng.random_bool(0.8) {
                        *EXTREMES.choose(rng).unwrap()
                    } else {
                        rng.random()
                    };
                    let bytes = v.to_le_bytes();
                    for (i, &byte) in bytes.iter().take(f.width).enumerate() {
                        let k = if f.big_endian { f.width - 1 - i } else { i };
                        b[f.at + k] = byte;
                    }
                    log.push(format!(
                        "field at {} := {v:#x} (low {} bytes)",
                        f.at, f.width
                    ));
                }
            }
            6 if len > 0 => {
                let (a, e) = span(rng, len);
                rng.fill(&mut b[a..e]);
                log.push(format!("garble {a}..{e}"));
            }
            7 if len > 0 => {
                let (a, e) = span(rng, len);
                let copy = b[a..e].to_vec();
                let at = rng.random_range(0..=len);
                b.splice(at..at, copy);
                log.push(format!("duplicate {a}..{e} at {at}"));
            }
            8 => {
                let n = rng.random_range(1..=32);
                b.extend((0..n).map(|_| rng.random::<u8>()));
                log.push(format!("append {n} bytes"));
            }
            9 if rng.random_bool(0.2) => {
                let n = rng.random_range(0..=256);
                *b = (0..n).map(|_| rng.random()).collect();
                log.push(format!("replace by {n} random bytes"));
            }
            _ => {}
        }
    }
}

/// Tokens that break parsers of numbers, indices and labels.
const WEIRD: &[&str] = &[
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "infinity",
    "1e400",
    "-1e400",
    "1e-400",
    "1.7976931348623157e308",
    "4.9e-324",
    "99999999999999999999",
    "18446744073709551616",
    "18446744073709551615",
    "4294967296",
    "4294967295",
    "2147483648",
    "0",
    "-0",
    "-1",
    "+1",
    "-2",
    "1.5",
    "0x10",
    "1_000",
    "",
    " ",
    "1e",
    "e5",
    ".",
    "-",
    "+",
    "++1",
    "٣",
    "\u{feff}1",
    "1:2:3",
    ":",
    "::",
    "0:1",
    "qid:1",
    "#",
    ",",
    ";",
    "\"",
    "\"\"",
    "\t",
    "\0",
    "\r",
    "\n",
    "\r\n",
    "M",
    "B",
    "é",
    "\u{fffd}",
    "00000000000000000000001",
];

/// Byte spans of number-like tokens: runs of digits, signs, dots and exponents.
fn number_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let num = |c: u8| c.is_ascii_digit() || b"+-.eE".contains(&c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if num(b[i]) {
            let s = i;
            while i < b.len() && num(b[i]) {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n')
        .map(|l| l.to_vec())
        .collect()
}

/// Text-level mutations (1 to 4), then sometimes byte-level ones.
fn mutate_text(rng: &mut ChaCha8Rng, b: &mut Vec<u8>, log: &mut Vec<String>) {
    for _ in 0..rng.random_range(1..=4) {
        let mut ls = lines(b);
        match rng.random_range(0..10) {
            0 if !ls.is_empty() => {
                let k = rng.random_range(0..ls.len());
                let l = ls[k].clone();
                ls.insert(k, l);
                *b = ls.concat();
                log.push(format!("duplicate line {}", k + 1));
            }
            1 if !ls.is_empty() => {
                let k = rng.random_range(0..ls.len());
                ls.remove(k);
                *b = ls.concat();
                log.push(format!("delete line {}", k + 1));
            }
            2 if ls.len() > 1 => {
                let (i, j) = (rng.random_range(0..ls.len()), rng.random_range(0..ls.len()));
                ls.swap(i, j);
                *b = ls.concat();
                log.push(format!("swap lines {} and {}", i + 1, j + 1));
            }
            3..=5 => {
                let spans = number_spans(b);
                if let Some(&(s, e)) = spans.choose(rng) {
                    let w = *WEIRD.choose(rng).unwrap();
                    b.splice(s..e, w.bytes());
                    log.push(format!("number at {s} := {w:?}"));
                }
            }
            6 => {
                let at = rng.random_range(0..=b.len());
                let w = *WEIRD.choose(rng).unwrap();
                b.splice(at..at, w.bytes());
                log.push(format!("insert {w:?} at {at}"));
            }
            7 => {
                let choice = rng.random_range(0..4);
                *b = match choice {
                    0 => Vec::new(),
                    1 => b"\n\n  \n".to_vec(),
                    2 => b"# only a comment\n".to_vec(),
                    _ => b"\r\n".to_vec(),
                };
                log.push(format!("replace by blank text #{choice}"));
            }
            8 => {
                let n = rng.random_range(1000..100_000);
                let line: Vec<u8> = (0..n).map(|k| b"0123456789 :,."[k % 14]).collect();
                let at = rng.random_range(0..=ls.len());
                ls.insert(at, [line, b"\n".to_vec()].concat());
                *b = ls.concat();
                log.push(format!("insert a {n}-byte line before line {}", at + 1));
            }
            _ => {
                let mut crlf = Vec::with_capacity(b.len());
                for &c in b.iter() {
                    if c == b'\n' {
                        crlf.push(b'\r');
                    }
                    crlf.push(c);
                }
                *b = crlf;
                log.push("CRLF".into());
            }
        }
    }
    if rng.random_bool(0.2) {
        mutate_bytes(rng, b, &[], log);
    }
}

fn gz(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn bz2(b: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// Mutate (or, one case in 16, leave valid), sometimes compress, sometimes corrupt the
/// compressed stream; write to `path`. Returns whether the file is still the valid one.
fn prepare(
    rng: &mut ChaCha8Rng,
    path: &Path,
    mut b: Vec<u8>,
    mutate: impl FnOnce(&mut ChaCha8Rng, &mut Vec<u8>, &mut Vec<String>),
    log: &mut Vec<String>,
) -> bool {
    let mut valid = rng.random_ratio(1, 16);
    if !valid {
        mutate(rng, &mut b, log);
    }
    let compressed = match rng.random_range(0..10) {
        0 | 1 => {
            b = gz(&b);
            log.push("gzip".into());
            true
        }
        2 => {
            b = bz2(&b);
            log.push("bzip2".into());
            true
        }
        _ => false,
    };
    if compressed && rng.random_bool(0.3) {
        mutate_bytes(rng, &mut b, &[], log);
        valid = false;
    }
    std::fs::write(path, &b).unwrap();
    valid
}

// ---- IDX ----------------------------------------------------------------------------------

fn idx_images(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let (count, rows, cols) = (
        rng.random_range(1..6u32),
        rng.random_range(1..6u32),
        rng.random_range(1..6u32),
    );
    let mut b = vec![0, 0, 8, 3];
    for d in [count, rows, cols] {
        b.extend(d.to_be_bytes());
    }
    b.extend((0..count * rows * cols).map(|_| rng.random::<u8>()));
    b
}

fn idx_labels(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let count = rng.random_range(1..20u32);
    let mut b = vec![0, 0, 8, 1];
    b.extend(count.to_be_bytes());
    b.extend((0..count).map(|_| rng.random_range(0..10u8)));
    b
}

/// The magic (whole, and its type and dimension bytes) and the dimension sizes.
const IDX_FIELDS: &[Field] = &[
    Field {
        at: 0,
        width: 4,
        big_endian: true,
    },
    Field {
        at: 2,
        width: 1,
        big_endian: true,
    },
    Field {
        at: 3,
        width: 1,
        big_endian: true,
    },
    Field {
        at: 4,
        width: 4,
        big_endian: true,
    },
    Field {
        at: 8,
        width: 4,
        big_endian: true,
    },
    Field {
        at: 12,
        width: 4,
        big_endian: true,
    },
];

#[test]
fn fuzz_idx() {
    drive("idx", |rng, path, log| {
        let images = rng.random_bool(0.6);
        let b = if images {
            idx_images(rng)
        } else {
            idx_labels(rng)
        };
        let fields = if images { IDX_FIELDS } else { &IDX_FIELDS[..4] };
        let valid = prepare(rng, path, b, |r, b, l| mutate_bytes(r, b, fields, l), log);
        if images {
            judge(path, valid, idx::read_images(path), |x| {
                if x.is_empty() || x.iter().any(|v| !(0.0..=255.0).contains(v)) {
                    return Err(format!("unsound {:?} images", x.dim()));
                }
                Ok(())
            })
        } else {
            judge(path, valid, idx::read_labels(path), |l| {
                (!l.is_empty()).then_some(()).ok_or("no labels".into())
            })
        }
    });
}

// ---- CIFAR --------------------------------------------------------------------------------

#[test]
fn fuzz_cifar() {
    drive("cifar", |rng, path, log| {
        let hundred = rng.random_bool(0.4);
        let label_bytes = if hundred { 2 } else { 1 };
        let record = label_bytes + cifar::PIXELS;
        let count = rng.random_range(1..4);
        let mut b = Vec::with_capacity(count * record);
        for _ in 0..count {
            if hundred {
                b.extend([rng.random_range(0..20u8), rng.random_range(0..100u8)]);
            } else {
                b.push(rng.random_range(0..10u8));
            }
            b.extend((0..cifar::PIXELS).map(|_| rng.random::<u8>()));
        }
        // The label bytes of each record are the "header fields" here.
        let fields: Vec<Field> = (0..count * label_bytes)
            .map(|k| Field {
                at: (k / label_bytes) * record + k % label_bytes,
                width: 1,
                big_endian: false,
            })
            .collect();
        let valid = prepare(rng, path, b, |r, b, l| mutate_bytes(r, b, &fields, l), log);
        let (r, limit) = if !hundred {
            (cifar::read_cifar10(path), 10)
        } else if rng.random_bool(0.5) {
            (cifar::read_cifar100(path, cifar::Cifar100Label::Fine), 100)
        } else {
            (cifar::read_cifar100(path, cifar::Cifar100Label::Coarse), 20)
        };
        judge(path, valid, r, |d| {
            sound_dense(d)?;
            if d.x.nrows() != cifar::PIXELS || d.labels.iter().any(|&l| l >= limit) {
                return Err(format!("unsound {:?}, labels {:?}", d.x.dim(), d.labels));
            }
            Ok(())
        })
    });
}

// ---- LIBSVM -------------------------------------------------------------------------------

fn libsvm_text(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    let binary = rng.random_bool(0.5);
    let mut t = String::new();
    for _ in 0..rng.random_range(1..8) {
        let label = if binary {
            ["-1", "+1", "1"][rng.random_range(0..3)].to_string()
        } else {
            rng.random_range(0..5).to_string()
        };
        t.push_str(&label);
        let mut j = 0;
        loop {
            j += rng.random_range(1..=4);
            if j > n {
                break;
            }
            t.push_str(&format!(
                " {j}:{}",
                rng.random_range(-100..100) as f64 / 8.0
            ));
        }
        if rng.random_bool(0.1) {
            t.push_str(" # comment");
        }
        t.push('\n');
    }
    t.into_bytes()
}

#[test]
fn fuzz_libsvm() {
    drive("libsvm", |rng, path, log| {
        let n = rng.random_range(1..12);
        let b = libsvm_text(rng, n);
        let declared = if rng.random_bool(0.8) { Some(n) } else { None };
        log.push(format!("n_features {declared:?}"));
        let valid = prepare(rng, path, b, mutate_text, log);
        let r = libsvm::read_libsvm(path, declared);
        // Undeclared, a valid file whose samples are all empty has no features: an error.
        let valid = valid && !(declared.is_none() && r.is_err());
        judge(path, valid, r, |d| {
            sound_sparse(d)?;
            match declared {
                Some(k) if d.x.n_features() != k => {
                    Err(format!("{} features, {k} declared", d.x.n_features()))
                }
                _ => Ok(()),
            }
        })
    });
}

// ---- CSV ----------------------------------------------------------------------------------

#[test]
fn fuzz_csv() {
    drive("csv", |rng, path, log| {
        let cols = rng.random_range(2..7);
        let delim = [b',', b';', b'\t'][rng.random_range(0..3)];
        let header =
            [csv::Header::Auto, csv::Header::Present, csv::Header::Absent][rng.random_range(0..3)];
        let label = match rng.random_range(0..4) {
            0 => csv::LabelColumn::None,
            1 => csv::LabelColumn::First,
            2 => csv::LabelColumn::Last,
            _ => csv::LabelColumn::Index(rng.random_range(0..cols)),
        };
        let label_at = match label {
            csv::LabelColumn::None => None,
            csv::LabelColumn::First => Some(0),
            csv::LabelColumn::Last => Some(cols - 1),
            csv::LabelColumn::Index(c) => Some(c),
        };
        let names = rng.random_bool(0.3);
        // At most one skipped column, never the label's.
        let skip: Vec<usize> = (0..cols)
            .filter(|&c| Some(c) != label_at && rng.random_bool(0.2))
            .take(1)
            .collect();
        let features = cols - usize::from(label_at.is_some()) - skip.len();
        let sep = (delim as char).to_string();
        let mut t = String::new();
        if header != csv::Header::Absent {
            let names: Vec<String> = (0..cols).map(|c| format!("col{c}")).collect();
            t.push_str(&names.join(&sep));
            t.push('\n');
        }
        for _ in 0..rng.random_range(1..8) {
            let row: Vec<String> = (0..cols)
                .map(|c| match (Some(c) == label_at, names) {
                    (true, true) => ["M", "B"][rng.random_range(0..2)].to_string(),
                    (true, false) => rng.random_range(0..5).to_string(),
                    _ => format!("{}", rng.random_range(-1000..1000) as f64 / 16.0),
                })
                .collect();
            t.push_str(&row.join(&sep));
            t.push('\n');
        }
        log.push(format!(
            "{cols} cols, delimiter {sep:?}, {header:?}, label {label:?}, skip {skip:?}, \
             names {names}"
        ));
        let opts = csv::CsvOptions {
            header,
            label,
            skip,
            label_names: if names {
                vec![("M".into(), 0), ("B".into(), 1)]
            } else {
                Vec::new()
            },
            delimiter: delim,
        };
        let valid = prepare(rng, path, t.into_bytes(), mutate_text, log) && features > 0;
        judge(path, valid, csv::read_csv(path, &opts), sound_dense)
    });
}

// ---- NumPy .npy ---------------------------------------------------------------------------

/// A valid .npy file written by ndarray-npy: a matrix (f64 or f32, C or Fortran order) or a
/// vector of integer labels; and the values it holds, in row-major order.
fn npy_file(rng: &mut ChaCha8Rng, labels: bool) -> (Vec<u8>, Vec<f64>) {
    let mut b = Vec::new();
    if labels {
        let v: Vec<i64> = (0..rng.random_range(1..20))
            .map(|_| rng.random_range(-3..10))
            .collect();
        ndarray::Array1::from(v.clone()).write_npy(&mut b).unwrap();
        return (b, v.iter().map(|&x| x as f64).collect());
    }
    let (r, c) = (rng.random_range(1..6), rng.random_range(1..6));
    let a = ndarray::Array2::from_shape_fn((r, c), |_| {
        f64::from(rng.random_range(-1000..1000i32)) / 8.0
    });
    let a = if rng.random_bool(0.5) {
        a
    } else {
        let mut f = ndarray::Array2::zeros(a.raw_dim().f());
        f.assign(&a);
        f
    };
    if rng.random_bool(0.5) {
        a.write_npy(&mut b).unwrap();
    } else {
        a.mapv(|v| v as f32).write_npy(&mut b).unwrap();
    }
    (b, a.iter().copied().collect())
}

/// Values a header field is rewritten to: shapes and dtypes that overflow, lie about the
/// length, or are not numbers; and things that are not a header at all.
const NPY_SHAPES: &[&str] = &[
    "()",
    "(0,)",
    "(0, 3)",
    "(3, 0)",
    "(1,)",
    "(2, 2)",
    "(2, 3, 4)",
    "(4294967296, 4294967296)",
    "(18446744073709551615, 2)",
    "(18446744073709551616,)",
    "(-1, 2)",
    "(1000000000, 1000000000)",
    "(2305843009213693952, 1)",
    "(3, 'a')",
    "[2, 2]",
    "(2.0, 2)",
    "(,)",
];
const NPY_DESCRS: &[&str] = &[
    "'<f8'",
    "'>f8'",
    "'<f4'",
    "'>f4'",
    "'=f8'",
    "'|f8'",
    "'<f2'",
    "'<f16'",
    "'<i8'",
    "'>i4'",
    "'|u1'",
    "'|i1'",
    "'<u8'",
    "'<c16'",
    "'|b1'",
    "'<U8'",
    "'|S5'",
    "'|O'",
    "'<M8[ns]'",
    "[('a', '<f8')]",
    "'<f99999999999999999999'",
    "'f'",
    "''",
    "8",
    "None",
];

fn mutate_npy(rng: &mut ChaCha8Rng, b: &mut Vec<u8>, log: &mut Vec<String>) {
    let header_end = 10 + usize::from(u16::from_le_bytes([b[8], b[9]]));
    let text = String::from_utf8_lossy(&b[10..header_end]).to_string();
    let new_text = match rng.random_range(0..6) {
        0 => {
            let to = *NPY_SHAPES.choose(rng).unwrap();
            log.push(format!("shape := {to}"));
            let from = text.find("'shape': ").map(|k| k + 9);
            from.map(|k| {
                let end = text[k..].find(')').map_or(text.len(), |e| k + e + 1);
                format!("{}{to}{}", &text[..k], &text[end..])
            })
        }
        1 => {
            let to = *NPY_DESCRS.choose(rng).unwrap();
            log.push(format!("descr := {to}"));
            let k = text.find("'descr': ").map(|k| k + 9);
            k.map(|k| {
                let end = text[k + 1..].find('\'').map_or(text.len(), |e| k + e + 2);
                format!("{}{to}{}", &text[..k], &text[end..])
            })
        }
        2 => {
            log.push("fortran_order flipped".into());
            Some(if text.contains("False") {
                text.replacen("False", "True", 1)
            } else {
                text.replacen("True", "False", 1)
            })
        }
        3 => {
            let depth = *[7usize, 9, 64, 100_000].choose(rng).unwrap();
            log.push(format!("header nested {depth} deep"));
            Some(format!("{}{}\n", "[".repeat(depth), "]".repeat(depth)))
        }
        _ => None,
    };
    if let Some(t) = new_text {
        // Usually a consistent header length; sometimes the old one.
        let t = if t.ends_with('\n') {
            t
        } else {
            t.trim_end().to_string() + "\n"
        };
        let mut nb = b[..10].to_vec();
        if rng.random_bool(0.85) {
            let len = u16::try_from(t.len()).unwrap_or(u16::MAX);
            nb[8..10].copy_from_slice(&len.to_le_bytes());
        }
        nb.extend(t.as_bytes());
        nb.extend(&b[header_end..]);
        *b = nb;
    }
    if rng.random_bool(0.5) {
        mutate_bytes(rng, b, NPY_FIELDS, log);
    }
}

/// Magic, version bytes, and the header length.
const NPY_FIELDS: &[Field] = &[
    Field {
        at: 0,
        width: 1,
        big_endian: false,
    },
    Field {
        at: 6,
        width: 1,
        big_endian: false,
    },
    Field {
        at: 7,
        width: 1,
        big_endian: false,
    },
    Field {
        at: 8,
        width: 2,
        big_endian: false,
    },
    Field {
        at: 8,
        width: 4,
        big_endian: false,
    },
];

#[test]
fn fuzz_npy() {
    drive("npy", |rng, path, log| {
        let labels = rng.random_bool(0.3);
        let (mut b, values) = npy_file(rng, labels);
        // No compression: .npy is read uncompressed, offsets are the file's.
        let valid = rng.random_ratio(1, 16);
        if !valid {
            mutate_npy(rng, &mut b, log);
        }
        std::fs::write(path, &b).unwrap();
        let len = b.len();
        if labels {
            judge(path, valid, npy::read_label_values(path), |l| {
                if valid && l.iter().map(|&x| x as f64).collect::<Vec<_>>() != values {
                    return Err("valid labels read wrong".into());
                }
                (l.len() <= len)
                    .then_some(())
                    .ok_or(format!("{} labels from {len} bytes", l.len()))
            })
        } else {
            judge(path, valid, npy::read_matrix(path), |x| {
                if x.is_empty() || x.iter().any(|v| !v.is_finite()) {
                    return Err(format!("unsound {:?} matrix", x.dim()));
                }
                if x.len() * 4 > len {
                    return Err(format!("{:?} matrix from {len} bytes", x.dim()));
                }
                if valid && x.iter().copied().collect::<Vec<_>>() != values {
                    return Err("valid matrix read wrong".into());
                }
                Ok(())
            })
        }
    });
}

// ---- regressions: inputs the loaders once accepted silently or reported vaguely --------------

fn rejection<T>(path: &Path, r: anyhow::Result<T>) -> String {
    let text = format!("{:#}", r.err().expect("expected a rejection"));
    assert!(text.contains(&path.display().to_string()), "{text}");
    text
}

#[test]
fn idx_header_claiming_a_billion_items_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = vec![0, 0, 8, 3];
    for d in [1_000_000_000u32, 28, 28] {
        b.extend(d.to_be_bytes());
    }
    b.resize(100, 7);
    let raw = dir.path().join("big-idx3-ubyte");
    std::fs::write(&raw, &b).unwrap();
    let e = rejection(&raw, idx::read_images(&raw));
    assert!(
        e.contains("truncated at byte offset 100") && e.contains("1000000000 images"),
        "{e}"
    );
    // Compressed, the claim cannot be checked against the file's length: it is checked against
    // the memory budget before anything is read (784·10⁹ bytes and their f64: no machine).
    let z = dir.path().join("big-idx3-ubyte.gz");
    std::fs::write(&z, gz(&b)).unwrap();
    let e = rejection(&z, idx::read_images(&z));
    assert!(
        e.contains("[1000000000, 28, 28]") && e.contains("refused before allocating"),
        "{e}"
    );
    // A zero dimension is refused, with its offset.
    let mut zero = b[..16].to_vec();
    zero[8..12].copy_from_slice(&0u32.to_be_bytes());
    std::fs::write(&raw, &zero).unwrap();
    let e = rejection(&raw, idx::read_images(&raw));
    assert!(
        e.contains("byte offset 8") && e.contains("pixel rows is 0"),
        "{e}"
    );
}

#[test]
fn empty_libsvm_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, want) in [
        (
            "empty.svm",
            "",
            "line 1: end of file without a sample (the file is empty)",
        ),
        (
            "blank.svm",
            "\n# c\n  \n",
            "line 4: end of file without a sample (only blank",
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let e = rejection(&p, libsvm::read_libsvm(&p, Some(5)));
        assert!(e.contains(want), "{e}");
    }
    // A duplicate index hidden by an explicit zero, and indices beyond u32 whatever the
    // declared count.
    let p = dir.path().join("dup.svm");
    std::fs::write(&p, "1 3:0 3:1\n").unwrap();
    let e = rejection(&p, libsvm::read_libsvm(&p, Some(5)));
    assert!(
        e.contains("line 1") && e.contains("index 3 appears twice"),
        "{e}"
    );
    std::fs::write(&p, "1 4294967297:1\n").unwrap();
    let e = rejection(&p, libsvm::read_libsvm(&p, Some(usize::MAX)));
    assert!(e.contains("feature index 4294967297 is too large"), "{e}");
    // Undeclared and no index at all: the feature count is unknown.
    std::fs::write(&p, "1\n-1\n").unwrap();
    let e = rejection(&p, libsvm::read_libsvm(&p, None));
    assert!(e.contains("no feature index"), "{e}");
}

#[test]
fn csv_first_row_is_not_silently_taken_for_a_header() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nan.csv");
    // `nan` parses as a number: a data row with a non-finite value, not a header.
    std::fs::write(&p, "1,nan\n3,4\n").unwrap();
    let e = rejection(&p, csv::read_csv(&p, &Default::default()));
    assert!(
        e.contains("line 1, column 2") && e.contains("not a finite number"),
        "{e}"
    );
    // A text label that is one of the names makes a data row too.
    let opts = csv::CsvOptions {
        label: csv::LabelColumn::Last,
        label_names: vec![("M".into(), 0), ("B".into(), 1)],
        ..Default::default()
    };
    std::fs::write(&p, "1,2,M\n3,4,B\n").unwrap();
    let d = csv::read_csv(&p, &opts).unwrap();
    assert_eq!(d.labels, vec![0, 1]);
    // Options that cannot fit the rows are refused with the line.
    std::fs::write(&p, "1,2,3\n").unwrap();
    let opts = csv::CsvOptions {
        skip: vec![7],
        ..Default::default()
    };
    let e = rejection(&p, csv::read_csv(&p, &opts));
    assert!(
        e.contains("line 1: skipped column 7 but only 3 fields"),
        "{e}"
    );
    let opts = csv::CsvOptions {
        label: csv::LabelColumn::First,
        skip: vec![0],
        ..Default::default()
    };
    let e = rejection(&p, csv::read_csv(&p, &opts));
    assert!(e.contains("label column is also skipped"), "{e}");
    // Compressed CSV reads like the other formats.
    let z = dir.path().join("a.csv.gz");
    std::fs::write(&z, gz(b"1,2\n3,4\n")).unwrap();
    assert_eq!(
        csv::read_csv(&z, &Default::default()).unwrap().x.dim(),
        (2, 2)
    );
    let none = dir.path().join("none.csv");
    let e = rejection(&none, csv::read_csv(&none, &Default::default()));
    assert!(e.contains("cannot open"), "{e}");
}
