//! The generator (23)–(24): exact spectrum, orthonormal factors, reproducible, and a cache that
//! detects corruption. The gaussian generator (FAPS fig. 1): N(0, 1) moments, reproducible
//! whatever the thread count.

use dpca_bench::data::cache::{read_matrix, write_matrix, MatrixCache};
use dpca_bench::data::matrix::Block;
use dpca_bench::data::synthetic::{gaussian_matrix, svd_matrix, Spectrum};
use dpca_bench::problem::subspace::Reference;

#[test]
fn singular_values_are_the_prescribed_spectrum() {
    let (n, m) = (40, 3000);
    let spec = Spectrum::Geometric { xi: 1.1 };
    let a = svd_matrix(n, m, spec, 11).unwrap();
    let r = Reference::from_gram(Block::Dense(a.view()).gram()).unwrap();
    let sv = r.singular_values(n);
    let want = spec.values(n);
    for i in 0..n {
        assert!(
            (sv[i] - want[i]).abs() <= 1e-12 * want[0],
            "σ_{i}: {} vs {}",
            sv[i],
            want[i]
        );
    }
    // Left singular vectors are exactly U's columns only up to sign; check the arithmetic one too.
    let spec = Spectrum::Arithmetic { kappa: 10.0 };
    let a = svd_matrix(n, m, spec, 12).unwrap();
    let sv = Reference::from_gram(Block::Dense(a.view()).gram())
        .unwrap()
        .singular_values(n);
    assert!((sv[0] - 1.0).abs() < 1e-12 && (sv[n - 1] - 0.1).abs() < 1e-12);
}

#[test]
fn same_seed_same_matrix_other_seed_other_matrix() {
    let spec = Spectrum::Geometric { xi: 1.01 };
    let a = svd_matrix(20, 5000, spec, 1).unwrap();
    let b = svd_matrix(20, 5000, spec, 1).unwrap();
    let c = svd_matrix(20, 5000, spec, 2).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn generator_rejects_m_below_n() {
    assert!(svd_matrix(10, 5, Spectrum::Geometric { xi: 1.1 }, 0).is_err());
}

#[test]
fn cache_round_trips_and_regenerates_a_corrupt_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = MatrixCache::new(dir.path());
    let a = svd_matrix(8, 64, Spectrum::Geometric { xi: 1.5 }, 3).unwrap();
    let mut builds = 0;
    let got = cache
        .get_or_build("t", "key", || {
            builds += 1;
            Ok(a.clone())
        })
        .unwrap();
    assert_eq!(got, a);
    let path = cache.path("t", "key");
    assert_eq!(
        read_matrix(&path, "key").unwrap(),
        a,
        "byte-exact round trip"
    );

    // Flip one payload byte: the checksum catches it and the matrix is rebuilt.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let err = read_matrix(&path, "key").unwrap_err().to_string();
    assert!(err.contains("checksum"), "{err}");
    let got = cache
        .get_or_build("t", "key", || {
            builds += 1;
            Ok(a.clone())
        })
        .unwrap();
    assert_eq!((got, builds), (a.clone(), 2));
    assert_eq!(
        read_matrix(&path, "key").unwrap(),
        a,
        "rewritten after regeneration"
    );

    // Truncated and foreign files are rejected with a reason.
    std::fs::write(&path, &bytes[..100]).unwrap();
    assert!(read_matrix(&path, "key")
        .unwrap_err()
        .to_string()
        .contains("truncated"));
    write_matrix(&path, "key", &a).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[0] = b'X';
    std::fs::write(&path, &bytes).unwrap();
    assert!(read_matrix(&path, "key")
        .unwrap_err()
        .to_string()
        .contains("magic"));
}

#[test]
fn gaussian_entries_have_standard_normal_moments() {
    // 60 × 5000 = 3e5 entries over three column blocks (the last one partial).
    let a = gaussian_matrix(60, 5000, 7).unwrap();
    let len = a.len() as f64;
    let moment = |k: i32| a.iter().map(|v| v.powi(k)).sum::<f64>() / len;
    // Five standard errors: sd of the k-th sample moment is √(E x^2k − (E x^k)²)/√len.
    let tol = |var: f64| 5.0 * (var / len).sqrt();
    assert!(moment(1).abs() < tol(1.0), "mean {}", moment(1));
    assert!((moment(2) - 1.0).abs() < tol(2.0), "variance {}", moment(2));
    assert!(moment(3).abs() < tol(15.0), "third moment {}", moment(3));
    assert!(
        (moment(4) - 3.0).abs() < tol(96.0),
        "fourth moment {}",
        moment(4)
    );
    // Rows 0 and 1 (5000 entries each, across the three blocks) are uncorrelated.
    let (r0, r1) = (a.row(0), a.row(1));
    let corr = r0.dot(&r1) / (r0.dot(&r0) * r1.dot(&r1)).sqrt();
    assert!(
        corr.abs() < 5.0 / (5000f64).sqrt(),
        "rows 0 and 1: corr {corr}"
    );
}

#[test]
fn gaussian_matrix_depends_on_the_seed_only() {
    let a = gaussian_matrix(30, 4500, 1).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| gaussian_matrix(30, 4500, 1).unwrap());
    assert_eq!(a, one, "same seed, one thread: the same matrix");
    assert_ne!(a, gaussian_matrix(30, 4500, 2).unwrap());
    // A narrower matrix is the wider one's first columns (each column block has its own stream).
    let narrow = gaussian_matrix(30, 2100, 1).unwrap();
    assert_eq!(narrow.view(), a.slice(ndarray::s![.., ..2100]));
    assert!(gaussian_matrix(0, 10, 1).is_err());
}

/// AAᵀ by group sums (a window of them per thread count) gives the same bits on 1, 2 and 3
/// threads, and agrees with one dense product to rounding.
#[test]
fn gram_is_the_same_whatever_the_thread_count() {
    let a = gaussian_matrix(40, 9 * 4096 + 123, 5).unwrap();
    let gram_on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| Block::Dense(a.view()).gram())
    };
    let one = gram_on(1);
    assert_eq!(one, gram_on(2));
    assert_eq!(one, gram_on(3));
    let direct = a.dot(&a.t());
    let err = (&one - &direct).iter().fold(0f64, |m, v| m.max(v.abs()));
    assert!(err <= 1e-10 * direct[[0, 0]], "max |Δ| = {err:e}");
}

/// Any columns of the generators, in any order, equal the full matrices' bit for bit (the
/// MPI backend's ranks generate only theirs); the columns span several generator blocks.
#[test]
fn generator_columns_equal_the_full_matrices_columns() {
    use dpca_bench::data::synthetic::{gaussian_columns, svd_columns};
    let (n, m) = (9, 4500);
    let spec = Spectrum::Geometric { xi: 1.3 };
    let a = svd_matrix(n, m, spec, 21).unwrap();
    let g = gaussian_matrix(n, m, 21).unwrap();
    let bits = |a: &ndarray::Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let picks: [Vec<usize>; 4] = [
        (1000..3000).collect(),
        vec![4499, 0, 2048, 2047, 17],
        vec![],
        (0..m).collect(),
    ];
    for wanted in &picks {
        let want = a.select(ndarray::Axis(1), wanted);
        assert_eq!(
            bits(&svd_columns(n, m, spec, 21, wanted).unwrap()),
            bits(&want)
        );
        let want = g.select(ndarray::Axis(1), wanted);
        assert_eq!(
            bits(&gaussian_columns(n, m, 21, wanted).unwrap()),
            bits(&want)
        );
    }
    assert!(svd_columns(n, m, spec, 21, &[m]).is_err());
    assert!(gaussian_columns(n, m, 21, &[m]).is_err());
}
