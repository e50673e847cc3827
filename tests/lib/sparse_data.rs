//! Sparse data stays sparse: CSR blocks give the same products, method iterates and metrics as
//! the same data held dense, and the block-Krylov reference (no n×n Gram) agrees with LAPACK's.

use crate::common;

use dpca_bench::data::loaders::Csr;
use dpca_bench::data::matrix::{Block, DataMatrix};
use dpca_bench::fed::{Message, Network};
use dpca_bench::linalg::orth;
use dpca_bench::methods::registry::Running;
use dpca_bench::problem::subspace::Reference;
use dpca_bench::seed;
use dpca_bench::seed::uniform_matrix;
use ndarray::{Array2, ArrayView2};
use rand::Rng;

/// A random sparse n×m matrix (about `density` of its entries non-zero, a few strong features
/// so that the spectrum has a gap) as CSR samples and as the same dense matrix.
fn sparse_pair(n: usize, m: usize, density: f64, s: u64) -> (DataMatrix, DataMatrix) {
    let mut rng = seed::rng(s, &["sparse"]);
    let mut dense = Array2::<f64>::zeros((n, m));
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    for j in 0..m {
        for i in 0..n {
            let boost = if i < 6 { 4.0 - i as f64 * 0.5 } else { 1.0 };
            if rng.random::<f64>() < density * boost.min(2.0) {
                let v = boost * rng.random_range(-1.0..=1.0);
                dense[[i, j]] = v;
                indices.push(i as u32);
                values.push(v);
            }
        }
        indptr.push(indices.len());
    }
    let csr = Csr::new(n, indptr, indices, values).unwrap();
    (
        DataMatrix::Sparse(csr),
        DataMatrix::Dense(dpca_bench::linalg::to_f_order(dense.view())),
    )
}

fn max_rel_diff(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    (&a - &b).iter().fold(0.0f64, |m, v| m.max(v.abs())) / scale
}

#[test]
fn sparse_products_equal_dense_ones() {
    let (sp, de) = sparse_pair(40, 300, 0.1, 1);
    let z = uniform_matrix(40, 5, &mut seed::rng(1, &["z"]));
    let (s, d) = (sp.view(), de.view());
    assert!(max_rel_diff(s.gram_times(z.view()).view(), d.gram_times(z.view()).view()) < 1e-13);
    assert!(max_rel_diff(s.gram().view(), d.gram().view()) < 1e-13);
    assert!(
        max_rel_diff(
            s.gram_times_par(z.view()).view(),
            d.gram_times(z.view()).view()
        ) < 1e-13
    );
    assert!((s.fro2_at(z.view()) - d.fro2_at(z.view())).abs() < 1e-12 * d.fro2_at(z.view()));
    assert!((s.fro2() - d.fro2()).abs() < 1e-13 * d.fro2());
    // Sub-blocks: client 2 of 3 sees the same samples either way.
    let sizes = [100, 120, 80];
    let (bs, bd) = (s.split(&sizes)[1], d.split(&sizes)[1]);
    assert_eq!(bs.samples(), 120);
    assert!(
        max_rel_diff(
            bs.gram_times(z.view()).view(),
            bd.gram_times(z.view()).view()
        ) < 1e-13
    );
}

/// Each method on CSR clients follows the same iterates as on dense clients, with the same
/// communication counted.
#[test]
fn methods_on_sparse_clients_match_dense_clients() {
    let (n, m, p, d) = (40, 600, 4, 5);
    let (sp, de) = sparse_pair(n, m, 0.1, 2);
    let sizes = common::even_sizes(m, d);
    let z0 = orth(uniform_matrix(n, p, &mut seed::rng(2, &["z0"])).view());
    let start = Message::new().with("z", z0);
    for name in ["ssi", "localpower", "faps"] {
        fn build<'a>(
            name: &str,
            start: &Message,
            data: &'a DataMatrix,
            sizes: &[usize],
        ) -> Running<'a> {
            let n = data.n();
            Running::named(
                name,
                &toml::Table::new(),
                start,
                3,
                data.view().split(sizes),
                n,
            )
            .unwrap()
        }
        let (mut a, mut b) = (
            build(name, &start, &sp, &sizes),
            build(name, &start, &de, &sizes),
        );
        let z = |r: &Running| r.server.estimate().get("z").unwrap().clone();
        for round in 1..=15 {
            let (fa, fb) = (a.step().unwrap().objective, b.step().unwrap().objective);
            let diff = max_rel_diff(z(&a).view(), z(&b).view());
            assert!(
                diff < 1e-9,
                "{name} round {round}: iterates differ by {diff:e}"
            );
            if let (Some(fa), Some(fb)) = (fa, fb) {
                assert!(
                    (fa - fb).abs() <= 1e-11 * fb,
                    "{name}: objective {fa} vs {fb}"
                );
            }
        }
        let (ca, cb) = (a.net.counters(), b.net.counters());
        assert_eq!(ca.bytes_up, cb.bytes_up, "{name}");
        assert_eq!(ca.bytes_down, cb.bytes_down, "{name}");
    }
}

/// The reference for large n (block Krylov on X ↦ A(AᵀX), never forming AAᵀ) agrees with
/// dsyevd on the Gram matrix, and so do the metrics computed from it.
#[test]
fn krylov_reference_matches_lapack() {
    let (n, p) = (120, 5);
    for data in [
        sparse_pair(n, 800, 0.05, 4).0,
        DataMatrix::Dense(common::small(n, 900, p, 1.05, 5).a),
    ] {
        let exact = Reference::from_gram(data.view().gram()).unwrap();
        let top = data.view().top_gram_eigs(p).unwrap();
        assert!(top.residual <= 1e-12, "residual {:e}", top.residual);
        let approx = Reference::from_top(data.view(), top.values, top.vectors);
        let rel = (&approx.values - &exact.values.slice(ndarray::s![..p]))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()))
            / exact.values[0];
        assert!(rel <= 1e-13, "eigenvalues off by {rel:e}");
        // Metrics of the exact subspace and of a random one, both ways.
        let ustar = exact.vectors.slice(ndarray::s![.., ..p]).to_owned();
        let random = orth(uniform_matrix(n, p, &mut seed::rng(6, &["z"])).view());
        for z in [ustar, random] {
            let (a, b) = (
                approx.metrics(data.view(), z.view()).unwrap(),
                exact.metrics(data.view(), z.view()).unwrap(),
            );
            assert!((a.objective - b.objective).abs() <= 1e-12 * b.objective);
            assert!(
                (a.kkt - b.kkt).abs() <= 1e-10 * b.kkt.max(1e-6),
                "{a:?} vs {b:?}"
            );
            assert!((a.sv_err - b.sv_err).abs() <= 1e-10, "{a:?} vs {b:?}");
            assert!(
                (a.subspace_dist - b.subspace_dist).abs() <= 1e-9,
                "{a:?} vs {b:?}"
            );
        }
    }
}

/// A block of a sparse matrix is a view: splitting never copies the non-zeros.
#[test]
fn sparse_blocks_are_views() {
    let (sp, _) = sparse_pair(30, 100, 0.2, 7);
    let DataMatrix::Sparse(csr) = &sp else {
        unreachable!()
    };
    let blocks = sp.view().split(&[50, 50]);
    let Block::Sparse(b) = blocks[1] else {
        panic!("sparse data gives sparse blocks")
    };
    assert_eq!(b.nnz(), csr.nnz() - csr.indptr()[50]);
}

/// Beyond n = 8192 no Gram matrix is formed: the reference comes from block Krylov, is cached
/// (vectors and values) and reloaded bit for bit, and metrics take products with the data.
#[test]
fn large_n_reference_is_krylov_and_cached() {
    let n = dpca_bench::data::matrix::GRAM_MAX_N + 808;
    let (data, _) = sparse_pair(n, 400, 0.002, 8);
    let dir = tempfile::tempdir().unwrap();
    let cache = dpca_bench::data::cache::MatrixCache::new(dir.path());
    let first = Reference::build(data.view(), 3, &cache, "big").unwrap();
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        files.len(),
        2,
        "vectors and values cached, no Gram: {files:?}"
    );
    assert!(files.iter().all(|f| f.starts_with("krylov-")), "{files:?}");
    let again = Reference::build(data.view(), 3, &cache, "big").unwrap();
    assert_eq!(first.values, again.values);
    assert_eq!(first.vectors, again.vectors);
    let m = first.metrics(data.view(), first.vectors.view()).unwrap();
    assert!(m.kkt < 1e-12 && m.sv_err < 1e-13, "{m:?}");
}

/// Preprocessing: unit_top gives λ₁(AAᵀ) = 1 for dense and sparse data alike; centring gives
/// zero-mean features; on sparse data anything but unit_top is refused (it would densify).
#[test]
fn preprocessing_rescales_both_kinds_and_keeps_sparse_sparse() {
    use dpca_bench::data::matrix::top_eigenvalue;
    use dpca_bench::data::prepare::preprocess;
    use dpca_bench::spec::Preprocess;
    let (sp, de) = sparse_pair(30, 200, 0.1, 9);
    for mut data in [sp.clone(), de.clone()] {
        preprocess(&mut data, &[Preprocess::UnitTop], "test").unwrap();
        let top = top_eigenvalue(data.view()).unwrap();
        assert!((top - 1.0).abs() < 1e-12, "λ₁ = {top}");
    }
    let mut centred = de.clone();
    preprocess(&mut centred, &[Preprocess::Center], "test").unwrap();
    let DataMatrix::Dense(c) = &centred else {
        unreachable!()
    };
    let mean = c.mean_axis(ndarray::Axis(1)).unwrap();
    assert!(mean.iter().all(|v| v.abs() < 1e-14), "{mean}");
    for step in [
        Preprocess::Scale01,
        Preprocess::Center,
        Preprocess::Standardize,
    ] {
        let mut s = sp.clone();
        let err = preprocess(&mut s, &[step], "rcv1-binary")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("densify") && err.contains("rcv1-binary"),
            "{err}"
        );
        assert_eq!(s, sp, "refused steps leave the data untouched");
    }
}
