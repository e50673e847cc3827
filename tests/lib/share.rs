//! What a rank of the MPI backend builds alone ([`problem::share`]) equals, bit for bit, the
//! same columns of the whole instance rank 0 builds (`Family::build`), with its start and
//! client sizes: for every synthetic generator, with the generator's matrix in the cache (rank
//! 0 put it there) and without (another machine's cache), and for any column range a rank may
//! hold (client blocks, all, none).

use dpca_bench::data::cache::MatrixCache;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::fed::Message;
use dpca_bench::plan;
use dpca_bench::problem;
use dpca_bench::progress::Progress;
use dpca_bench::spec;
use ndarray::s;
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
        _ => panic!("compared as dense"),
    }
}

/// The columns of clients `clients` of `sizes`.
fn of_clients(sizes: &[usize], clients: Range<usize>) -> Range<usize> {
    let at = |c: usize| sizes[..c].iter().sum::<usize>();
    at(clients.start)..at(clients.end)
}

/// Load the manifest `body` (written into `dir`).
fn load(dir: &Path, body: &str) -> spec::Experiment {
    let path = dir.join("share.toml");
    std::fs::write(&path, body).unwrap();
    plan::load(&path, "default").unwrap_or_else(|e| panic!("{e}"))
}

/// The instance's whole data, sizes and start that shares are compared with.
struct Whole<'a> {
    data: &'a DataMatrix,
    sizes: &'a [usize],
    start: Option<&'a Message>,
}

/// share == the whole data's columns for client ranges of a K-client partition, with the
/// cache `cache` (rank 0's, or another machine's).
fn compare(what: &str, point: &spec::Point, root: &Path, cache: &MatrixCache, whole: &Whole) {
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
    point: &spec::Point,
    root: &Path,
    cache: &MatrixCache,
    whole: &Whole,
    ranges: impl IntoIterator<Item = Range<usize>>,
) {
    for r in ranges {
        let pick = |sizes: &[usize]| of_clients(sizes, r.clone());
        let share = problem::family(point.problem.kind)
            .share(point, SEED, cache, root, &pick)
            .unwrap();
        let want = of_clients(whole.sizes, r.clone());
        let at = format!("{what}, clients {r:?}");
        assert_eq!(share.sizes, whole.sizes, "{at}");
        assert_eq!(share.lo, want.start, "{at}");
        assert_eq!(share.cols.m(), want.len(), "{at}");
        match whole.data {
            DataMatrix::Dense(a) => {
                let expect = DataMatrix::Dense(a.slice(s![.., want]).to_owned());
                assert!(bits(share.cols) == bits(expect), "{at}: columns differ");
            }
            sparse => {
                let expect = sparse.select(&want.collect::<Vec<_>>());
                assert!(share.cols == expect, "{at}: samples differ");
            }
        }
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
    let inst = problem::family(point.problem.kind)
        .build(point, SEED, &warm, dir.path(), &Progress::hidden())
        .unwrap();
    let whole = Whole {
        data: inst.data(),
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

/// Loads `rest` as an SSI manifest, builds its dataset whole (sparse or not, as `sparse` says)
/// and arranged for the partition the way the runner does, and checks every client range's
/// share against it; returns the experiment for more checks.
fn check_arranged(root: &Path, rest: &str, what: &str, sparse: bool) -> spec::Experiment {
    use dpca_bench::data::{partition, prepare};
    let exp = load(
        root,
        &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", rest),
    );
    let point = &exp.points[0];
    let (a, labels) = prepare::dataset_matrix(&point.data, root).unwrap();
    assert_eq!(a.is_sparse(), sparse, "{what}");
    let key = point.data.cache_key();
    let mut rng = dpca_bench::seed::rng(SEED, &["partition", &key]);
    let (a, sizes) = partition::arrange(a, labels.as_deref(), &point.partition, &mut rng).unwrap();
    let whole = Whole {
        data: &a,
        sizes: &sizes,
        start: None,
    };
    compare(
        what,
        point,
        root,
        &MatrixCache::new(root.join("cache")),
        &whole,
    );
    exp
}

/// A dataset's share equals the columns of the whole matrix arranged for the partition: read
/// sample by sample (CIFAR's bytes, entrywise preprocessing, any partition, Dirichlet's by
/// label too), or loaded whole where a step needs more than a mean.
#[test]
fn dataset_columns_equal_the_arranged_matrix() {
    use dpca_bench::data::prepare;
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
        let what = format!("cifar-10 {split} {steps} {scheme}");
        let exp = check_arranged(root, &rest, &what, false);
        let point = &exp.points[0];
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
        let inst = problem::family(point.problem.kind)
            .build(point, SEED, &cache, root, &Progress::hidden())
            .unwrap();
        let whole = Whole {
            data: inst.data(),
            sizes: inst.sizes(),
            start: Some(inst.start()),
        };
        let what = format!("eigvec cifar-10 {steps} {scheme}");
        compare_clients(&what, point, root, &cache, &whole, std::iter::once(1..3));
    }
}

/// An a9a folder (LIBSVM, 123 features, ±1 labels) with 9 and 6 random samples and their
/// recorded SHA-256 (LIBSVM publishes none).
fn fake_a9a(root: &Path) {
    use sha2::{Digest, Sha256};
    let dir = root.join("a9a");
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = 999u64;
    let mut next = |k: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % k
    };
    let mut sums = String::new();
    for (name, count) in [("a9a", 9), ("a9a.t", 6)] {
        let mut text = String::new();
        for _ in 0..count {
            text += if next(2) == 0 { "-1" } else { "+1" };
            let mut f = 0;
            loop {
                f += 1 + next(30);
                if f > 123 {
                    break;
                }
                text += &format!(" {f}:{}", next(7) as f64 / 4.0 - 0.5);
            }
            text += "\n";
        }
        std::fs::write(dir.join(name), &text).unwrap();
        sums += &format!("{:x}  {name}\n", Sha256::digest(text.as_bytes()));
    }
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
}

/// A LIBSVM dataset's share holds only the rank's rows, equal to the arranged matrix's (IID,
/// even, the test file's rows after the training file's); under a Dirichlet partition (every
/// label needed first) it is loaded whole, still equal.
#[test]
fn libsvm_rows_equal_the_arranged_matrix() {
    use dpca_bench::data::prepare;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fake_a9a(root);
    for (split, m, scheme) in [
        ("all", 14, "\"iid\""),
        ("all", 15, "\"even\""),
        ("test", 6, "\"iid\""),
        ("all", 15, "\"dirichlet\"\nalpha = 5.0"),
    ] {
        let rest = format!(
            "[data]\ngenerator = \"dataset\"\ndataset = \"a9a\"\nsplit = \"{split}\"\n\
             n = 123\nm = {m}\n[partition]\nscheme = {scheme}\nclients = 3\n[problem]\np = 2\n"
        );
        let what = format!("a9a {split} {m} {scheme}");
        let exp = check_arranged(root, &rest, &what, true);
        let point = &exp.points[0];
        // The row reader applies to the file (the share skips it under Dirichlet).
        let rows = prepare::sparse_samples(&point.data, root, &[2, 0]).unwrap();
        assert!(rows.is_some(), "{what}");
    }
}
