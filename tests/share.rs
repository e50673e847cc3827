//! What a rank of the MPI backend builds alone ([`problem::share`]) equals, bit for bit, the
//! same columns of the whole instance rank 0 builds ([`problem::build`]), with its start and
//! client sizes: for every synthetic generator, with the generator's matrix in the cache (rank
//! 0 put it there) and without (another machine's cache), and for any column range a rank may
//! hold (client blocks, all, none).

use dpca_bench::data::cache::MatrixCache;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::fed::Message;
use dpca_bench::manifest;
use dpca_bench::problem;
use dpca_bench::run::Progress;
use ndarray::{s, Array2};
use std::ops::Range;
use std::path::Path;

/// Head of every manifest: paper, id and one method of the family.
fn manifest(paper: &str, file: &str, method: &str, rest: &str) -> String {
    format!(
        "id = \"share\"\npaper = \"{paper}\"\npaper_file = \"{file}\"\ntitle = \"share test\"\n\
         reproduces = \"nothing\"\nseed = 5\n{rest}\n[stop]\nmax_rounds = 3\n\n\
         [[methods]]\nname = \"{method}\"\nlabel = \"M\"\n"
    )
}

fn bits(a: DataMatrix) -> Vec<u64> {
    match a {
        DataMatrix::Dense(a) => a.iter().map(|v| v.to_bits()).collect(),
        DataMatrix::Sparse(_) => panic!("synthetic data is dense"),
    }
}

/// The columns of clients `clients` of `sizes`.
fn of_clients(sizes: &[usize], clients: Range<usize>) -> Range<usize> {
    let at = |c: usize| sizes[..c].iter().sum::<usize>();
    at(clients.start)..at(clients.end)
}

/// Load the manifest `body` (written into `dir`).
fn load(dir: &Path, body: &str) -> manifest::Experiment {
    let path = dir.join("share.toml");
    std::fs::write(&path, body).unwrap();
    manifest::load(&path, "default").unwrap_or_else(|e| panic!("{e}"))
}

/// The instance's whole data, sizes and start that shares are compared with.
struct Whole<'a> {
    data: &'a Array2<f64>,
    sizes: &'a [usize],
    start: Option<&'a Message>,
}

/// share == the whole data's columns for client ranges of a K-client partition, with the
/// cache `cache` (rank 0's, or another machine's).
fn compare(what: &str, point: &manifest::Point, root: &Path, cache: &MatrixCache, whole: &Whole) {
    let k = whole.sizes.len();
    compare_clients(
        what,
        point,
        root,
        cache,
        whole,
        [0..k, 1..k - 1, k - 1..k, 1..1],
    );
}

/// As [`compare`], for the ranks holding clients `ranges`.
fn compare_clients(
    what: &str,
    point: &manifest::Point,
    root: &Path,
    cache: &MatrixCache,
    whole: &Whole,
    ranges: impl IntoIterator<Item = Range<usize>>,
) {
    for r in ranges {
        let pick = |sizes: &[usize]| of_clients(sizes, r.clone());
        let share = problem::share(point, SEED, cache, root, &pick).unwrap();
        let want = of_clients(whole.sizes, r.clone());
        let at = format!("{what}, clients {r:?}");
        assert_eq!(share.sizes, whole.sizes, "{at}");
        assert_eq!(share.lo, want.start, "{at}");
        assert_eq!(share.cols.m(), want.len(), "{at}");
        let expect = DataMatrix::Dense(whole.data.slice(s![.., want]).to_owned());
        assert!(bits(share.cols) == bits(expect), "{at}: columns differ");
        if let Some(start) = whole.start {
            assert_eq!(parts(&share.start), parts(start), "{at}: start");
        }
    }
}

fn parts(m: &Message) -> Vec<(String, Vec<u64>)> {
    m.parts()
        .map(|(n, a)| (n.to_string(), a.iter().map(|v| v.to_bits()).collect()))
        .collect()
}

const SEED: u64 = 77;

/// share == build's columns, with the generator's matrix cached by rank 0 and without.
fn check(what: &str, body: &str) {
    let dir = tempfile::tempdir().unwrap();
    let exp = load(dir.path(), body);
    let point = &exp.points[0];
    let warm = MatrixCache::new(dir.path().join("warm"));
    let cold = MatrixCache::new(dir.path().join("cold"));
    let inst = problem::build(point, SEED, &warm, dir.path(), &Progress::hidden()).unwrap();
    let DataMatrix::Dense(data) = inst.data() else {
        panic!("{what}: dense data")
    };
    let whole = Whole {
        data,
        sizes: inst.sizes(),
        start: Some(inst.start()),
    };
    compare(&format!("{what}, cached"), point, dir.path(), &warm, &whole);
    compare(
        &format!("{what}, generated"),
        point,
        dir.path(),
        &cold,
        &whole,
    );
}

#[test]
fn svd_columns_over_an_iid_shuffle_equal_the_built_matrix() {
    // m > 2048: the columns come from several generator blocks, scattered by the shuffle.
    let rest = "[data]\ngenerator = \"svd\"\nspectrum = \"geometric\"\nn = 12\nm = 5000\n\
                xi = 1.2\n[partition]\nscheme = \"iid\"\nclients = 5\n[problem]\np = 3\n";
    check(
        "svd, iid",
        &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", rest),
    );
}

#[test]
fn svd_columns_of_the_sparse_family_with_mu_equal_the_built_matrix() {
    let rest = "[data]\ngenerator = \"svd\"\nspectrum = \"arithmetic\"\nn = 10\nm = 4500\n\
                kappa = 10.0\n[partition]\nscheme = \"uneven\"\nclients = 4\n\
                [problem]\nkind = \"sparse\"\np = 2\nmu = 0.01\n";
    check(
        "svd, sparse, mu",
        &manifest("dssal1", "002_ff223d7a56bd523a.txt", "manpg", rest),
    );
}

#[test]
fn gaussian_columns_equal_the_built_matrix() {
    let rest = "[data]\ngenerator = \"gaussian\"\nn = 7\nm = 4200\n\
                [partition]\nscheme = \"even\"\nclients = 3\n[problem]\np = 2\n";
    check(
        "gaussian",
        &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", rest),
    );
}

#[test]
fn robust_columns_equal_the_built_matrix() {
    for magnitude in ["sign", "uniform"] {
        let rest = format!(
            "[data]\ngenerator = \"robust\"\nn = 30\nm = 47\nrank = 2\nsparsity = 0.1\n\
             magnitude = \"{magnitude}\"\n[partition]\nscheme = \"even\"\nclients = 4\n\
             [problem]\nkind = \"robust\"\n"
        );
        check(
            magnitude,
            &manifest("dcfpca", "004_db919d10e2190205.txt", "dcfpca", &rest),
        );
    }
}

#[test]
fn spiked_columns_equal_the_built_matrix() {
    for het in [false, true] {
        let rest = format!(
            "[data]\ngenerator = \"spiked\"\nn = 40\nm = 90\nspikes = [40.0, 30.0]\n\
             support = 5\ncovariance_scale = true\nheterogeneous = {het}\n\
             [partition]\nscheme = \"uneven\"\nclients = 4\n[problem]\nkind = \"sparse\"\np = 2\n"
        );
        check(
            &format!("spiked, heterogeneous {het}"),
            &manifest("fspca", "003_bf0c008a27de5e4a.txt", "pca", &rest),
        );
    }
}

#[test]
fn eigengap_columns_equal_the_built_matrix() {
    // Built whole then sliced (centring needs every sample), still the same columns and start.
    let rest = "[data]\ngenerator = \"eigengap\"\nn = 20\nm = 300\ndelta = 0.2\n\
                [partition]\nscheme = \"even\"\nclients = 4\n[problem]\nkind = \"eigvec\"\np = 1\n";
    check(
        "eigengap",
        &manifest("cedre", "001_2ae475dc7acdb24e.txt", "cedre", rest),
    );
}

/// A CIFAR-10 folder with 7 random records per batch file and their recorded SHA-256 (CIFAR
/// publishes none, so the loader checks the recorded ones).
fn fake_cifar10(root: &Path) {
    use sha2::{Digest, Sha256};
    let dir = root.join("cifar-10");
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = 12345u64;
    let mut byte = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 56) as u8
    };
    let mut sums = String::new();
    let names = (1..=5).map(|i| format!("data_batch_{i}.bin"));
    for name in names.chain(["test_batch.bin".to_string()]) {
        let mut bytes = Vec::new();
        for _ in 0..7 {
            bytes.push(byte() % 10);
            bytes.extend((0..3072).map(|_| byte()));
        }
        std::fs::write(dir.join(&name), &bytes).unwrap();
        sums += &format!("{:x}  {name}\n", Sha256::digest(&bytes));
    }
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
}

/// A dataset's share equals the columns of the whole matrix arranged for the partition: read
/// sample by sample (CIFAR's bytes, entrywise preprocessing, any partition, Dirichlet's by
/// label too), or loaded whole where a step needs more than a mean.
#[test]
fn dataset_columns_equal_the_arranged_matrix() {
    use dpca_bench::data::{partition, prepare};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fake_cifar10(root);
    let cases = [
        ("all", "[\"scale01\", \"center\"]", "\"iid\"", true),
        (
            "train",
            "[\"center\", \"scale01\", \"center\"]",
            "\"dirichlet\"\nalpha = 1.0",
            true,
        ),
        ("all", "[]", "\"even\"", true),
        ("all", "[\"zscore\"]", "\"uneven\"", false),
    ];
    for (split, steps, scheme, by_sample) in cases {
        let rest = format!(
            "[data]\ngenerator = \"dataset\"\ndataset = \"cifar-10\"\nsplit = \"{split}\"\n\
             preprocess = {steps}\nn = 3072\nm = 30\n[partition]\nscheme = {scheme}\n\
             clients = 3\n[problem]\np = 2\n"
        );
        let exp = load(
            root,
            &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", &rest),
        );
        let point = &exp.points[0];
        let (a, labels) = prepare::dataset_matrix(&point.data, root).unwrap();
        let key = point.data.cache_key();
        let mut rng = dpca_bench::seed::rng(SEED, &["partition", &key]);
        let (a, sizes) =
            partition::arrange(a, labels.as_deref(), &point.partition, &mut rng).unwrap();
        let DataMatrix::Dense(data) = &a else {
            panic!("dense")
        };
        let whole = Whole {
            data,
            sizes: &sizes,
            start: None,
        };
        let what = format!("cifar-10 {split} {steps} {scheme}");
        compare(
            &what,
            point,
            root,
            &MatrixCache::new(root.join("cache")),
            &whole,
        );
        let read = prepare::ByteSamples::open(&point.data, root).unwrap();
        assert_eq!(read.is_some(), by_sample, "{what}");
    }
}

/// The eigvec family reads a byte dataset sample by sample too: its mean in the partition's
/// order, its covariance block by block, λ₁ and machine 1's warm start all give the bits of the
/// instance built whole (CIFAR-sized features: each share repeats a 3072×3072 dsyevd, so one
/// rank, clients 1–2 of 3).
#[test]
fn eigvec_dataset_shares_equal_the_built_instance() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fake_cifar10(root);
    // Dirichlet: the partition's order depends on the labels, read from the bytes too.
    let cases = [("[\"scale01\", \"center\"]", "\"dirichlet\"\nalpha = 1.0")];
    for (steps, scheme) in cases {
        let rest = format!(
            "[data]\ngenerator = \"dataset\"\ndataset = \"cifar-10\"\nsplit = \"all\"\n\
             preprocess = {steps}\nn = 3072\nm = 40\n[partition]\nscheme = {scheme}\n\
             clients = 3\n[problem]\nkind = \"eigvec\"\np = 1\n"
        );
        let exp = load(
            root,
            &manifest("cedre", "001_2ae475dc7acdb24e.txt", "cedre", &rest),
        );
        let point = &exp.points[0];
        let cache = MatrixCache::new(root.join("cache"));
        let inst = problem::build(point, SEED, &cache, root, &Progress::hidden()).unwrap();
        let DataMatrix::Dense(data) = inst.data() else {
            panic!("dense")
        };
        let whole = Whole {
            data,
            sizes: inst.sizes(),
            start: Some(inst.start()),
        };
        let what = format!("eigvec cifar-10 {steps} {scheme}");
        compare_clients(&what, point, root, &cache, &whole, std::iter::once(1..3));
    }
}
