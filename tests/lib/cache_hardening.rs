//! The matrix cache (format DPCAMAT2) on hostile files: another matrix's file under the
//! expected name, rewritten header fields, truncation at every offset, flipped bytes, the old
//! format. Each is rejected with a reason naming the file, never a panic, and `get_or_build`
//! regenerates the matrix.

use dpca_bench::data::cache::{read_matrix, write_matrix, MatrixCache};
use ndarray::{array, Array2};
use sha2::{Digest, Sha256};
use std::path::Path;

const KEY: &str = "svd n=3 m=2 spectrum=geometric(1.5) seed=7";

/// A 3×2 matrix with values whose bits matter: −0, a subnormal, NaN with a payload, ±∞.
fn awkward() -> Array2<f64> {
    array![
        [-0.0, f64::from_bits(1)],
        [f64::from_bits(0x7ff8_0000_dead_beef), f64::INFINITY],
        [f64::NEG_INFINITY, 1.0 / 3.0]
    ]
}

/// The file the format describes, built here by hand rather than by `write_matrix`.
fn craft(key: &str, rows: u64, cols: u64, colmajor: &[f64]) -> Vec<u8> {
    let mut b = b"DPCAMAT2".to_vec();
    for v in [rows, cols, key.len() as u64] {
        b.extend(v.to_le_bytes());
    }
    b.extend(key.as_bytes());
    for v in colmajor {
        b.extend(v.to_le_bytes());
    }
    let d = Sha256::digest(&b);
    b.extend(d);
    b
}

fn colmajor(a: &Array2<f64>) -> Vec<f64> {
    a.t().iter().copied().collect()
}

fn bits(a: &Array2<f64>) -> Vec<u64> {
    colmajor(a).iter().map(|v| v.to_bits()).collect()
}

/// The rejection of `path` for `key`: no panic, and the message names the file.
fn err(path: &Path, key: &str) -> String {
    let r = std::panic::catch_unwind(|| read_matrix(path, key));
    let e = r
        .expect("read_matrix panicked")
        .expect_err("expected a rejection");
    let text = format!("{e:#}");
    assert!(
        text.contains(&path.display().to_string()),
        "error does not name the file: {text}"
    );
    text
}

/// Rewrite the u64 at byte offset `at`.
fn set_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn crafted_file_reads_byte_exactly_and_writer_matches_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = awkward();
    let want = craft(KEY, 3, 2, &colmajor(&a));
    let path = dir.path().join("m.f64");
    std::fs::write(&path, &want).unwrap();
    assert_eq!(bits(&read_matrix(&path, KEY).unwrap()), bits(&a));
    // The writer produces exactly the documented bytes, whatever the in-memory layout.
    let written = dir.path().join("w.f64");
    write_matrix(&written, KEY, &a).unwrap();
    assert_eq!(std::fs::read(&written).unwrap(), want);
    let c_order = a.t().to_owned().reversed_axes();
    write_matrix(&written, KEY, &c_order).unwrap();
    assert_eq!(std::fs::read(&written).unwrap(), want);
    // A payload larger than the writer's and reader's chunk.
    let big = Array2::from_shape_fn((300, 50), |(i, j)| (i * 50 + j) as f64 * 0.5 - 7.0);
    write_matrix(&written, "big", &big).unwrap();
    assert_eq!(
        std::fs::read(&written).unwrap(),
        craft("big", 300, 50, &colmajor(&big))
    );
    assert_eq!(read_matrix(&written, "big").unwrap(), big);
}

#[test]
fn another_matrix_under_the_name_is_rejected_and_regenerated() {
    let dir = tempfile::tempdir().unwrap();
    let cache = MatrixCache::new(dir.path());
    let mine = array![[1.0, 2.0], [3.0, 4.0]];
    let theirs = array![[9.0, 8.0], [7.0, 6.0]];
    let path = cache.path("svd", KEY);
    // A well-formed file, same shape, of another key: the old format would have trusted it.
    write_matrix(&path, "svd n=3 m=2 spectrum=geometric(1.5) seed=8", &theirs).unwrap();
    let e = err(&path, KEY);
    assert!(
        e.contains("another matrix") && e.contains("seed=8") && e.contains("seed=7"),
        "{e}"
    );
    assert!(
        e.contains(&format!("byte offset {}", 32 + KEY.len() - 1)),
        "{e}"
    );
    let mut builds = 0;
    let got = cache
        .get_or_build("svd", KEY, || {
            builds += 1;
            Ok(mine.clone())
        })
        .unwrap();
    assert_eq!((got, builds), (mine.clone(), 1));
    assert_eq!(read_matrix(&path, KEY).unwrap(), mine, "rewritten for KEY");
    // Served from the cache now.
    let got = cache
        .get_or_build("svd", KEY, || panic!("must not rebuild"))
        .unwrap();
    assert_eq!(got, mine);

    // A key that is a prefix of the expected one, and files of other kinds altogether.
    write_matrix(&path, &KEY[..10], &mine).unwrap();
    assert!(err(&path, KEY).contains("another matrix"));
    for foreign in [
        &b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..],
        b"rows,cols\n1,2\n",
        b"",
        b"DPCA",
    ] {
        std::fs::write(&path, foreign).unwrap();
        let e = err(&path, KEY);
        assert!(e.contains("magic") || e.contains("truncated"), "{e}");
        let got = cache.get_or_build("svd", KEY, || Ok(mine.clone())).unwrap();
        assert_eq!(got, mine);
    }
}

#[test]
fn rewritten_header_fields_are_rejected_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.f64");
    let good = craft(KEY, 3, 2, &colmajor(&awkward()));
    let cases: &[(&str, usize, u64)] = &[
        ("swapped rows", 8, 2),
        ("swapped cols", 16, 3),
        ("zero rows", 8, 0),
        ("zero cols", 16, 0),
        ("huge rows", 8, u64::MAX),
        ("huge cols", 16, u64::MAX),
        // rows·cols·8 overflows u64 but rows·cols does not.
        ("overflow ×8", 8, 1 << 62),
        // rows·cols·8 fits; adding the header and key overflows.
        ("overflow +header", 8, (u64::MAX / 8) / 2),
        ("huge key", 24, u64::MAX),
        ("key +1", 24, KEY.len() as u64 + 1),
        ("key −1", 24, KEY.len() as u64 - 1),
        ("key 0", 24, 0),
    ];
    for &(what, at, v) in cases {
        let mut b = good.clone();
        set_u64(&mut b, at, v);
        std::fs::write(&path, &b).unwrap();
        let e = err(&path, KEY);
        assert!(
            e.contains("checksum") || e.contains("the file has"),
            "{what}: {e}"
        );
    }
    // Rows and cols swapped together keep every size consistent: the digest catches it.
    let mut b = good.clone();
    set_u64(&mut b, 8, 2);
    set_u64(&mut b, 16, 3);
    std::fs::write(&path, &b).unwrap();
    let e = err(&path, KEY);
    assert!(
        e.contains("checksum") && e.contains(&format!("byte offset {}", good.len() - 32)),
        "{e}"
    );
    // A 2^40-row claim in a small file is refused on the length alone, before allocating.
    let mut b = good.clone();
    set_u64(&mut b, 8, 1 << 40);
    std::fs::write(&path, &b).unwrap();
    let e = err(&path, KEY);
    assert!(
        e.contains("1099511627776") && e.contains("the file has"),
        "{e}"
    );
    // The old format is refused by its magic.
    let mut b = good.clone();
    b[7] = b'1';
    std::fs::write(&path, &b).unwrap();
    assert!(err(&path, KEY).contains("DPCAMAT1"));
}

#[test]
fn truncation_at_every_offset_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.f64");
    let good = craft(KEY, 3, 2, &colmajor(&awkward()));
    for cut in 0..good.len() {
        std::fs::write(&path, &good[..cut]).unwrap();
        let e = err(&path, KEY);
        assert!(e.contains("truncated"), "cut at {cut}: {e}");
    }
    // One byte too many is as wrong as one too few.
    let mut long = good.clone();
    long.push(0);
    std::fs::write(&path, &long).unwrap();
    err(&path, KEY);
}

#[test]
fn every_flipped_byte_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.f64");
    let good = craft(KEY, 3, 2, &colmajor(&awkward()));
    let payload = 32 + KEY.len();
    for at in 0..good.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = good.clone();
            b[at] ^= bit;
            std::fs::write(&path, &b).unwrap();
            let e = err(&path, KEY);
            if at >= payload {
                assert!(e.contains("checksum"), "byte {at}: {e}");
            }
        }
    }
}

#[test]
fn old_format_file_is_regenerated() {
    let dir = tempfile::tempdir().unwrap();
    let cache = MatrixCache::new(dir.path());
    let a = array![[1.0, 2.0, 3.0]];
    let path = cache.path("gram", KEY);
    // DPCAMAT1: magic, rows, cols, SHA-256 of the payload, payload; no key.
    let payload: Vec<u8> = colmajor(&a).iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut v1 = b"DPCAMAT1".to_vec();
    v1.extend(1u64.to_le_bytes());
    v1.extend(3u64.to_le_bytes());
    v1.extend(Sha256::digest(&payload));
    v1.extend(&payload);
    std::fs::write(&path, &v1).unwrap();
    assert!(err(&path, KEY).contains("older cache format DPCAMAT1"));
    let mut builds = 0;
    let got = cache
        .get_or_build("gram", KEY, || {
            builds += 1;
            Ok(a.clone())
        })
        .unwrap();
    assert_eq!((got, builds), (a.clone(), 1));
    assert_eq!(&std::fs::read(&path).unwrap()[..8], b"DPCAMAT2");
}

/// A rank's columns read from the cache equal the same columns of the whole matrix, bit for
/// bit, in the order asked; any flipped byte (even in a column not read) is still rejected,
/// and `get_columns` then answers None so that the rank builds its columns itself.
#[test]
fn column_reads_equal_the_slice_and_verify_the_whole_file() {
    use dpca_bench::data::cache::read_columns;
    let dir = tempfile::tempdir().unwrap();
    let a = Array2::from_shape_fn((5, 9), |(i, j)| (i * 10 + j) as f64 / 7.0);
    let path = dir.path().join("m.f64");
    write_matrix(&path, KEY, &a).unwrap();
    for wanted in [vec![3, 4, 5], vec![8, 0, 2], vec![], (0..9).collect()] {
        let got = read_columns(&path, KEY, &wanted).unwrap();
        assert_eq!(bits(&got), bits(&a.select(ndarray::Axis(1), &wanted)));
    }
    assert!(read_columns(&path, KEY, &[9]).is_err());
    assert!(read_columns(&path, KEY, &[1, 1]).is_err());
    assert!(read_columns(&path, "other key", &[1]).is_err());
    let good = std::fs::read(&path).unwrap();
    // Byte of column 7, entry 0: after the 32-byte header, the key and 7 columns of 5.
    let at = 32 + KEY.len() + 7 * 5 * 8;
    let mut bad = good.clone();
    bad[at] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let e = format!("{:#}", read_columns(&path, KEY, &[0, 1]).unwrap_err());
    assert!(e.contains("SHA-256") && e.contains("m.f64"), "{e}");
    let cache = MatrixCache::new(dir.path());
    let cached = cache.path("svd", KEY);
    std::fs::write(&cached, &bad).unwrap();
    assert!(cache.get_columns("svd", KEY, &[0]).is_none());
    std::fs::write(&cached, &good).unwrap();
    let got = cache.get_columns("svd", KEY, &[6, 2]).unwrap();
    assert_eq!(bits(&got), bits(&a.select(ndarray::Axis(1), &[6, 2])));
    assert!(MatrixCache::new(dir.path().join("none"))
        .get_columns("svd", KEY, &[0])
        .is_none());
}

/// A warm cache and a cold one give the caller the same matrix in the same layout
/// (column-major), even when the builder returns another: results computed from it must not
/// depend on whether the cache held it already.
#[test]
fn built_and_loaded_matrices_have_one_layout() {
    let dir = tempfile::tempdir().unwrap();
    let cache = MatrixCache::new(dir.path());
    let row_major = awkward();
    assert!(row_major.is_standard_layout() && row_major.ncols() > 1);
    let built = cache
        .get_or_build("t", "layout", || Ok(row_major.clone()))
        .unwrap();
    let loaded = cache
        .get_or_build("t", "layout", || panic!("cached: not built again"))
        .unwrap();
    for a in [&built, &loaded] {
        assert!(a.t().is_standard_layout(), "column-major");
        assert_eq!(a.strides(), loaded.strides());
    }
    let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&built), bits(&row_major));
    assert_eq!(bits(&loaded), bits(&row_major));
}
