//! Client partitions: IID shuffles, Dirichlet splits by label, both keep every sample once.

use dpca_bench::data::loaders::Csr;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::data::partition::arrange;
use dpca_bench::seed;
use dpca_bench::spec::{PartitionSpec, Scheme};
use ndarray::Array2;

/// A 1×m matrix whose entry j is j: after arranging, the row tells where each sample went.
fn tagged(m: usize) -> DataMatrix {
    DataMatrix::Dense(Array2::from_shape_fn((1, m), |(_, j)| j as f64))
}

/// The same as sparse samples of one feature (sample 0's value is 0: stored explicitly).
fn tagged_sparse(m: usize) -> DataMatrix {
    let values: Vec<f64> = (0..m).map(|j| j as f64).collect();
    DataMatrix::Sparse(Csr::new(1, (0..=m).collect(), vec![0; m], values).unwrap())
}

fn spec(scheme: Scheme, clients: usize, alpha: Option<f64>) -> PartitionSpec {
    PartitionSpec {
        scheme,
        clients,
        unit: None,
        alpha,
    }
}

fn columns(a: &DataMatrix) -> Vec<usize> {
    match a {
        DataMatrix::Dense(a) => a.row(0).iter().map(|&v| v as usize).collect(),
        DataMatrix::Sparse(a) | DataMatrix::Centred { x: a, .. } => {
            a.values().iter().map(|&v| v as usize).collect()
        }
    }
}

#[test]
fn iid_is_a_seeded_permutation_split_evenly() {
    let m = 1000;
    let (a, sizes) = arrange(
        tagged(m),
        None,
        &spec(Scheme::Iid, 7, None),
        &mut seed::rng(1, &["p"]),
    )
    .unwrap();
    let mut cols = columns(&a);
    assert_ne!(cols, (0..m).collect::<Vec<_>>(), "shuffled");
    let (b, _) = arrange(
        tagged(m),
        None,
        &spec(Scheme::Iid, 7, None),
        &mut seed::rng(1, &["p"]),
    )
    .unwrap();
    assert_eq!(a, b, "same seed, same order");
    cols.sort();
    assert_eq!(cols, (0..m).collect::<Vec<_>>(), "every sample once");
    assert_eq!(sizes.iter().sum::<usize>(), m);
    assert!(sizes.iter().all(|&s| s == 142 || s == 143));
}

#[test]
fn dirichlet_skews_labels_more_for_small_alpha() {
    let (m, d, classes) = (3000, 10, 10u32);
    let labels: Vec<u32> = (0..m).map(|j| j as u32 % classes).collect();
    let distinct = |alpha: f64| {
        let (a, sizes) = arrange(
            tagged(m),
            Some(&labels),
            &spec(Scheme::Dirichlet, d, Some(alpha)),
            &mut seed::rng(2, &["p"]),
        )
        .unwrap();
        let cols = columns(&a);
        let mut sorted = cols.clone();
        sorted.sort();
        assert_eq!(sorted, (0..m).collect::<Vec<_>>(), "every sample once");
        assert_eq!(sizes.iter().sum::<usize>(), m);
        assert!(sizes.iter().all(|&s| s > 0));
        // Mean number of classes holding ≥ 5 % of a client's samples.
        let mut start = 0;
        let mut total = 0.0;
        for &s in &sizes {
            let mut count = vec![0usize; classes as usize];
            for &j in &cols[start..start + s] {
                count[labels[j] as usize] += 1;
            }
            total += count.iter().filter(|&&c| c * 20 >= s).count() as f64;
            start += s;
        }
        total / d as f64
    };
    let (skewed, mixed) = (distinct(0.1), distinct(100.0));
    assert!(
        skewed < 4.0 && mixed > 9.0,
        "classes per client: α=0.1 → {skewed}, α=100 → {mixed}"
    );
}

#[test]
fn sparse_samples_are_permuted_like_dense_columns() {
    let part = spec(Scheme::Iid, 3, None);
    let (dense, sizes) = arrange(tagged(50), None, &part, &mut seed::rng(4, &["p"])).unwrap();
    let (sparse, sizes_sparse) =
        arrange(tagged_sparse(50), None, &part, &mut seed::rng(4, &["p"])).unwrap();
    assert_eq!(columns(&dense), columns(&sparse));
    assert_eq!(sizes, sizes_sparse);
    let blocks = sparse.view().split(&sizes);
    assert_eq!(
        blocks.iter().map(|b| b.samples()).collect::<Vec<_>>(),
        sizes
    );
}

#[test]
fn dirichlet_needs_labels() {
    let err = arrange(
        tagged(10),
        None,
        &spec(Scheme::Dirichlet, 2, Some(1.0)),
        &mut seed::rng(3, &[]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("labelled"));
}
