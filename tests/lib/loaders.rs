//! Loaders on small files written here: exact values and layout, and a clear error (file and
//! byte offset or line) for every kind of bad input.

use dpca_bench::data::loaders::{cifar, csv, idx, libsvm, Csr, Labeled};
use ndarray::{Array2, ShapeBuilder};
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn err_text<T: std::fmt::Debug>(r: anyhow::Result<T>) -> String {
    format!("{:#}", r.expect_err("expected an error"))
}

// ---- IDX ------------------------------------------------------------------------------------

/// `count` images of rows × cols whose pixel k of image j is (j·31 + k) mod 256.
fn idx_images(count: u32, rows: u32, cols: u32) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 3];
    for d in [count, rows, cols] {
        b.extend(d.to_be_bytes());
    }
    for j in 0..count {
        for k in 0..rows * cols {
            b.push(((j * 31 + k) % 256) as u8);
        }
    }
    b
}

fn idx_labels(labels: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, 1];
    b.extend((labels.len() as u32).to_be_bytes());
    b.extend(labels);
    b
}

#[test]
fn idx_images_are_columns_raw_and_gzipped() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = idx_images(3, 2, 3);
    for path in [
        write(dir.path(), "imgs-idx3-ubyte", &bytes),
        write(dir.path(), "imgs-idx3-ubyte.gz", &gz(&bytes)),
    ] {
        let x = idx::read_images(&path).unwrap();
        assert_eq!(x.dim(), (6, 3));
        assert!(x.t().is_standard_layout(), "column-major");
        for j in 0..3 {
            for k in 0..6 {
                assert_eq!(x[[k, j]], ((j * 31 + k) % 256) as f64);
            }
        }
    }
}

#[test]
fn idx_pair_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let imgs = write(dir.path(), "i", &idx_images(3, 2, 2));
    let labs = write(dir.path(), "l.gz", &gz(&idx_labels(&[7, 0, 9])));
    let d = idx::read_pair(&imgs, &labs).unwrap();
    assert_eq!(d.labels, vec![7, 0, 9]);
    assert_eq!(d.x.dim(), (4, 3));
    let short = write(dir.path(), "l2", &idx_labels(&[1, 2]));
    let e = err_text(idx::read_pair(&imgs, &short));
    assert!(
        e.contains("3 images") && e.contains("2 labels") && e.contains("l2"),
        "{e}"
    );
}

#[test]
fn idx_errors_name_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let good = idx_images(2, 2, 2);

    let labels = write(dir.path(), "labels-file", &idx_labels(&[1]));
    let e = err_text(idx::read_images(&labels));
    assert!(
        e.contains("labels-file")
            && e.contains("byte offset 0")
            && e.contains("2049")
            && e.contains("2051"),
        "{e}"
    );

    let cut = write(dir.path(), "cut", &good[..good.len() - 1]);
    let e = err_text(idx::read_images(&cut));
    assert!(
        e.contains("cut") && e.contains(&format!("truncated at byte offset {}", good.len() - 1)),
        "{e}"
    );

    let head = write(dir.path(), "head", &good[..10]);
    let e = err_text(idx::read_images(&head));
    assert!(
        e.contains("truncated at byte offset 10") && e.contains("16 bytes"),
        "{e}"
    );

    let tiny = write(dir.path(), "tiny", &[0, 0]);
    assert!(err_text(idx::read_labels(&tiny)).contains("truncated at byte offset 2"));

    let mut long = good.clone();
    long.extend([1, 2]);
    let long = write(dir.path(), "long", &long);
    let e = err_text(idx::read_images(&long));
    assert!(
        e.contains("2 unexpected bytes") && e.contains(&format!("byte offset {}", good.len())),
        "{e}"
    );

    let z = gz(&good);
    let zcut = write(dir.path(), "zcut.gz", &z[..z.len() / 2]);
    let e = err_text(idx::read_images(&zcut));
    assert!(
        e.contains("zcut.gz") && e.contains("corrupt or truncated"),
        "{e}"
    );

    let e = err_text(idx::read_images(&dir.path().join("missing")));
    assert!(e.contains("cannot open") && e.contains("missing"), "{e}");
}

// ---- CIFAR ----------------------------------------------------------------------------------

fn cifar_record(labels: &[u8], seed: u8) -> Vec<u8> {
    let mut r = labels.to_vec();
    r.extend((0..cifar::PIXELS).map(|k| (k as u8).wrapping_mul(7).wrapping_add(seed)));
    r
}

#[test]
fn cifar10_records_exact() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = [cifar_record(&[3], 1), cifar_record(&[9], 2)].concat();
    let p = write(dir.path(), "data_batch_1.bin", &bytes);
    let d = cifar::read_cifar10(&p).unwrap();
    assert_eq!(d.labels, vec![3, 9]);
    assert_eq!(d.x.dim(), (3072, 2));
    for j in 0..2 {
        for k in 0..3072 {
            assert_eq!(
                d.x[[k, j]],
                f64::from((k as u8).wrapping_mul(7).wrapping_add(j as u8 + 1))
            );
        }
    }
    let p2 = write(dir.path(), "b2.bin", &cifar_record(&[0], 5));
    let both = cifar::read_cifar10_batches(&[&p, &p2]).unwrap();
    assert_eq!(both.labels, vec![3, 9, 0]);
    assert_eq!(both.x.column(2), d_col(&p2).view());
}

fn d_col(p: &Path) -> ndarray::Array1<f64> {
    cifar::read_cifar10(p).unwrap().x.column(0).to_owned()
}

#[test]
fn cifar100_coarse_and_fine() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = [cifar_record(&[19, 99], 0), cifar_record(&[4, 42], 9)].concat();
    let p = write(dir.path(), "train.bin", &bytes);
    let fine = cifar::read_cifar100(&p, cifar::Cifar100Label::Fine).unwrap();
    let coarse = cifar::read_cifar100(&p, cifar::Cifar100Label::Coarse).unwrap();
    assert_eq!(fine.labels, vec![99, 42]);
    assert_eq!(coarse.labels, vec![19, 4]);
    assert_eq!(fine.x, coarse.x);
    assert_eq!(fine.x[[0, 1]], 9.0);
    assert_eq!(
        fine.x[[3071, 0]],
        f64::from((3071usize as u8).wrapping_mul(7))
    );
}

#[test]
fn cifar_errors_name_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let two = [cifar_record(&[1], 0), cifar_record(&[2], 0)].concat();
    let cut = write(dir.path(), "cut.bin", &two[..two.len() - 5]);
    let e = err_text(cifar::read_cifar10(&cut));
    assert!(
        e.contains("cut.bin")
            && e.contains("truncated")
            && e.contains("byte offset 3073")
            && e.contains("3068 of its 3073"),
        "{e}"
    );

    let bad = [cifar_record(&[1], 0), cifar_record(&[10], 0)].concat();
    let bad = write(dir.path(), "bad.bin", &bad);
    let e = err_text(cifar::read_cifar10(&bad));
    assert!(
        e.contains("bad.bin") && e.contains("byte offset 3073") && e.contains("label 10"),
        "{e}"
    );

    let bad100 = write(dir.path(), "bad100.bin", &cifar_record(&[20, 5], 0));
    let e = err_text(cifar::read_cifar100(&bad100, cifar::Cifar100Label::Fine));
    assert!(
        e.contains("byte offset 0") && e.contains("label 20") && e.contains("0..19"),
        "{e}"
    );
    let bad100 = write(dir.path(), "bad100f.bin", &cifar_record(&[2, 100], 0));
    let e = err_text(cifar::read_cifar100(&bad100, cifar::Cifar100Label::Coarse));
    assert!(
        e.contains("byte offset 1") && e.contains("label 100"),
        "{e}"
    );

    let empty = write(dir.path(), "empty.bin", &[]);
    assert!(err_text(cifar::read_cifar10(&empty)).contains("empty.bin"));
}

// ---- LIBSVM ---------------------------------------------------------------------------------

const SVM: &str = "+1 1:0.5 3:-2 # first\n\n-1 2:1.25 4:3e-1 qid:7\n+1\n-1 1:0 4:8\n";

#[test]
fn libsvm_plain_gz_bz2() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("a.svm", SVM.as_bytes().to_vec()),
        ("a.svm.gz", gz(SVM.as_bytes())),
        ("a.svm.bz2", bz2(SVM.as_bytes())),
    ] {
        let p = write(dir.path(), name, &bytes);
        let d = libsvm::read_libsvm(&p, Some(5)).unwrap();
        assert_eq!(d.labels, vec![1, 0, 1, 0], "{name}");
        let x = &d.x;
        assert_eq!((x.n_samples(), x.n_features(), x.nnz()), (4, 5, 5));
        assert_eq!(x.indptr(), &[0, 2, 4, 4, 5]);
        assert_eq!(x.indices(), &[0, 2, 1, 3, 3]);
        assert_eq!(x.values(), &[0.5, -2.0, 1.25, 0.3, 8.0]);
    }
    // Without a declared count, the largest index.
    let p = write(dir.path(), "b.svm", b"3 2:1 7:2\n0 1:1\n");
    let d = libsvm::read_libsvm(&p, None).unwrap();
    assert_eq!(d.x.n_features(), 7);
    assert_eq!(d.labels, vec![3, 0], "multiclass labels kept");
    // Out-of-order features are sorted.
    let p = write(dir.path(), "c.svm", b"1 5:5 2:2 9:9\n");
    let d = libsvm::read_libsvm(&p, None).unwrap();
    assert_eq!(d.x.indices(), &[1, 4, 8]);
    assert_eq!(d.x.values(), &[2.0, 5.0, 9.0]);
}

#[test]
fn libsvm_errors_name_file_line_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        // Out of range: token `6:1` starts at byte 13 of the file (line 2, byte 3 of the line).
        (
            "range",
            "1 1:1 2:2\n-1 6:1\n",
            &["line 2", "byte offset 13", "feature index 6", "1..=5"],
        ),
        ("zero", "1 0:1\n", &["line 1", "byte offset 2", "index 0"]),
        (
            "value",
            "1 1:1\n1 2:abc\n",
            &["line 2", "byte offset 10", "`abc`"],
        ),
        (
            "nocolon",
            "1 1:1 7\n",
            &["line 1", "byte offset 6", "index:value"],
        ),
        ("index", "1 x:1\n", &["line 1", "`x`"]),
        (
            "label",
            "one 1:1\n",
            &["line 1", "byte offset 0", "label `one`"],
        ),
        ("multi", "1,2 1:1\n", &["multi-label"]),
        ("mixed", "-1 1:1\n2 1:1\n", &["mix -1", "line 1", "line 2"]),
        (
            "dup",
            "1 3:1 2:1 3:4\n",
            &["line 1", "index 3 appears twice"],
        ),
        ("nan", "1 1:nan\n", &["not a finite number"]),
    ];
    for (name, text, want) in cases {
        let p = write(dir.path(), &format!("{name}.svm"), text.as_bytes());
        let e = err_text(libsvm::read_libsvm(&p, Some(5)));
        assert!(e.contains(&format!("{name}.svm")), "{e}");
        for w in *want {
            assert!(e.contains(w), "{name}: `{w}` not in: {e}");
        }
    }
    // Offsets in a compressed file are those of its decoded text, and say so.
    let p = write(dir.path(), "range.svm.bz2", &bz2(b"1 1:1 2:2\n-1 6:1\n"));
    let e = err_text(libsvm::read_libsvm(&p, Some(5)));
    assert!(
        e.contains("byte offset 13 of the decompressed (bzip2) data"),
        "{e}"
    );
    let z = bz2(SVM.repeat(50).as_bytes());
    let p = write(dir.path(), "cut.svm.bz2", &z[..z.len() - 20]);
    let e = err_text(libsvm::read_libsvm(&p, Some(5)));
    assert!(
        e.contains("cut.svm.bz2") && e.contains("cannot read past byte offset"),
        "{e}"
    );
}

// ---- CSV ------------------------------------------------------------------------------------

#[test]
fn csv_header_label_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "a.csv", b"3,2,x,y\n1.5,2,0\n-3,4e1,1\n7,8,1\n");
    let d = csv::read_csv(
        &p,
        &csv::CsvOptions {
            label: csv::LabelColumn::Last,
            ..Default::default()
        },
    )
    .unwrap();
    let want = Array2::from_shape_vec((2, 3).f(), vec![1.5, 2.0, -3.0, 40.0, 7.0, 8.0]).unwrap();
    assert_eq!(d.x, want);
    assert!(d.x.t().is_standard_layout(), "column-major");
    assert_eq!(d.labels, vec![0, 1, 1]);

    // No header, no label column.
    let p = write(dir.path(), "b.csv", b"1,2\n3,4\n");
    let d = csv::read_csv(&p, &Default::default()).unwrap();
    assert_eq!(
        d.x,
        Array2::from_shape_vec((2, 2).f(), vec![1.0, 2.0, 3.0, 4.0]).unwrap()
    );
    assert_eq!(d.labels, vec![0, 0]);

    // UCI WDBC style: ID column skipped, text labels mapped.
    let p = write(
        dir.path(),
        "w.data",
        b"842302,M,17.99,10.38\n8510426,B,13.54,14.36\n",
    );
    let opts = csv::CsvOptions {
        header: csv::Header::Absent,
        label: csv::LabelColumn::Index(1),
        skip: vec![0],
        label_names: vec![("M".into(), 0), ("B".into(), 1)],
        ..Default::default()
    };
    let d = csv::read_csv(&p, &opts).unwrap();
    assert_eq!(
        d.x,
        Array2::from_shape_vec((2, 2).f(), vec![17.99, 10.38, 13.54, 14.36]).unwrap()
    );
    assert_eq!(d.labels, vec![0, 1]);
}

#[test]
fn csv_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // A label column beyond the fields is named as the manifest numbers it, from 1.
    let p = write(dir.path(), "three.csv", b"1,2,3\n4,5,6\n");
    let opts = csv::CsvOptions {
        header: csv::Header::Absent,
        label: csv::LabelColumn::Index(98),
        ..Default::default()
    };
    let e = err_text(csv::read_csv(&p, &opts));
    assert!(e.contains("label column 99 but only 3 fields"), "{e}");
    let p = write(dir.path(), "ragged.csv", b"a,b,c\n1,2,3\n4,5\n");
    let e = err_text(csv::read_csv(&p, &Default::default()));
    assert!(
        e.contains("ragged.csv")
            && e.contains("line 3")
            && e.contains("2 fields")
            && e.contains("line 2 has 3"),
        "{e}"
    );

    let p = write(dir.path(), "text.csv", b"1,2\n3,oops\n");
    let e = err_text(csv::read_csv(
        &p,
        &csv::CsvOptions {
            header: csv::Header::Absent,
            ..Default::default()
        },
    ));
    assert!(
        e.contains("text.csv") && e.contains("line 2, column 2") && e.contains("`oops`"),
        "{e}"
    );

    let p = write(dir.path(), "lab.csv", b"1,2,-1\n");
    let e = err_text(csv::read_csv(
        &p,
        &csv::CsvOptions {
            label: csv::LabelColumn::Last,
            ..Default::default()
        },
    ));
    assert!(
        e.contains("line 1, column 3") && e.contains("label `-1`"),
        "{e}"
    );

    let p = write(dir.path(), "empty.csv", b"a,b\n");
    assert!(err_text(csv::read_csv(&p, &Default::default())).contains("no data rows"));
}

/// An index or feature column named as the label (integers, so not refused as continuous) is
/// refused for its many distinct labels; true class labels pass.
#[test]
fn csv_label_column_of_distinct_values_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rows = |label: &dyn Fn(usize) -> usize| {
        (0..40)
            .map(|i| format!("{}.5,{},{}\n", i, i % 7, label(i)))
            .collect::<String>()
    };
    let opts = csv::CsvOptions {
        label: csv::LabelColumn::Last,
        ..Default::default()
    };
    let p = write(dir.path(), "index.csv", rows(&|i| i).as_bytes());
    let e = err_text(csv::read_csv(&p, &opts));
    assert!(
        e.contains("index.csv")
            && e.contains("label column 3")
            && e.contains("40 distinct labels among 40"),
        "{e}"
    );
    let p = write(dir.path(), "classes.csv", rows(&|i| i % 3).as_bytes());
    assert_eq!(csv::read_csv(&p, &opts).unwrap().labels.len(), 40);
}

// ---- sparse products ------------------------------------------------------------------------

/// A random sparse n × m (features × samples) matrix as dense, and as CSR of its samples.
fn random_sparse(n: usize, m: usize, density: f64, seed: u64) -> (Array2<f64>, Csr) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut dense = Array2::zeros((n, m).f());
    let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
    for j in 0..m {
        for i in 0..n {
            if rng.random::<f64>() < density {
                let v: f64 = rng.random_range(-1.0..1.0);
                dense[[i, j]] = v;
                indices.push(i as u32);
                values.push(v);
            }
        }
        indptr.push(indices.len());
    }
    (dense, Csr::new(n, indptr, indices, values).unwrap())
}

fn close(a: &Array2<f64>, b: &Array2<f64>) {
    assert_eq!(a.dim(), b.dim());
    let err = (a - b).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(err < 1e-12, "max error {err}");
}

#[test]
fn sparse_products_match_dense() {
    let (n, m, p) = (40, 90, 3);
    let (a, csr) = random_sparse(n, m, 0.1, 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    // Z column-major as the rest of the code makes it; the product must not care.
    let z = Array2::from_shape_fn((n, p).f(), |_| rng.random_range(-1.0..1.0));
    let y = Array2::from_shape_fn((m, p), |_| rng.random_range(-1.0..1.0));
    close(
        &csr.view().a_at_z(z.view()).unwrap(),
        &a.dot(&a.t().dot(&z)),
    );
    close(&csr.view().at_z(z.view()).unwrap(), &a.t().dot(&z));
    close(&csr.view().a_y(y.view()).unwrap(), &a.dot(&y));
    // A client's block of samples 20..55: the same as the dense columns.
    let block = csr.samples(20..55);
    let a_blk = a.slice(ndarray::s![.., 20..55]);
    assert_eq!(block.n_samples(), 35);
    close(
        &block.a_at_z(z.view()).unwrap(),
        &a_blk.dot(&a_blk.t().dot(&z)),
    );
    close(
        &block.at_z(z.as_standard_layout().view()).unwrap(),
        &a_blk.t().dot(&z),
    );
    // Dimension mismatches are errors, not panics.
    assert!(csr.view().a_at_z(Array2::zeros((n + 1, p)).view()).is_err());
    assert!(block.a_y(y.view()).is_err());
}

#[test]
fn csr_invariants_and_stack() {
    assert!(
        Csr::new(3, vec![0, 2], vec![2, 1], vec![1.0, 1.0]).is_err(),
        "decreasing"
    );
    assert!(
        Csr::new(3, vec![0, 1], vec![3], vec![1.0]).is_err(),
        "out of range"
    );
    assert!(
        Csr::new(3, vec![0, 2], vec![0], vec![1.0]).is_err(),
        "lengths"
    );
    assert!(Csr::new(3, vec![1, 1], vec![], vec![]).is_err(), "start");
    let a = Csr::new(3, vec![0, 1, 2], vec![0, 2], vec![1.0, 2.0]).unwrap();
    let b = Csr::new(3, vec![0, 2], vec![1, 2], vec![3.0, 4.0]).unwrap();
    let s = Csr::stack(a, b).unwrap();
    assert_eq!(s.indptr(), &[0, 1, 2, 4]);
    assert_eq!(s.values(), &[1.0, 2.0, 3.0, 4.0]);
    assert!(s.heap_bytes() >= 4 * 12);
    assert!(Csr::stack(s, Csr::new(4, vec![0], vec![], vec![]).unwrap()).is_err());
}

#[test]
fn labeled_concat_keeps_order() {
    let a = Labeled {
        x: Array2::from_shape_vec((2, 1).f(), vec![1.0, 2.0]).unwrap(),
        labels: vec![5],
    };
    let b = Labeled {
        x: Array2::from_shape_vec((2, 2).f(), vec![3.0, 4.0, 5.0, 6.0]).unwrap(),
        labels: vec![6, 7],
    };
    let c = Labeled::concat(vec![a, b]).unwrap();
    assert_eq!(
        c.x,
        Array2::from_shape_vec((2, 3).f(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()
    );
    assert_eq!(c.labels, vec![5, 6, 7]);
}
