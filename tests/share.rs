//! What a rank of the MPI backend builds alone ([`problem::share`]) equals, bit for bit, the
//! same columns of the whole instance rank 0 builds ([`problem::build`]), with its start and
//! client sizes: for every synthetic generator, with the generator's matrix in the cache (rank
//! 0 put it there) and without (another machine's cache), and for any column range a rank may
//! hold (client blocks, all, none).

use dpca_bench::data::cache::MatrixCache;
use dpca_bench::data::matrix::DataMatrix;
use dpca_bench::manifest;
use dpca_bench::problem;
use dpca_bench::run::Progress;
use ndarray::s;
use std::ops::Range;

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

/// share == build's columns for client ranges of a K-client partition.
fn check(what: &str, body: &str, clients: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("share.toml");
    std::fs::write(&path, body).unwrap();
    let exp = manifest::load(&path, "default").unwrap_or_else(|e| panic!("{what}: {e}"));
    let point = &exp.points[0];
    let seed = 77;
    let warm = MatrixCache::new(dir.path().join("warm"));
    let cold = MatrixCache::new(dir.path().join("cold"));
    let inst = problem::build(point, seed, &warm, dir.path(), &Progress::hidden()).unwrap();
    let DataMatrix::Dense(full) = inst.data() else {
        panic!("{what}: dense data")
    };
    let ranges = [0..clients, 1..clients - 1, clients - 1..clients, 1..1];
    for (cache, cached) in [(&warm, "cached"), (&cold, "generated")] {
        for r in &ranges {
            let pick = |sizes: &[usize]| of_clients(sizes, r.clone());
            let share = problem::share(point, seed, cache, dir.path(), &pick).unwrap();
            let want = of_clients(inst.sizes(), r.clone());
            let at = format!("{what}, {cached}, clients {r:?}");
            assert_eq!(share.sizes, inst.sizes(), "{at}");
            assert_eq!(share.lo, want.start, "{at}");
            assert_eq!(share.cols.m(), want.len(), "{at}");
            let expect = DataMatrix::Dense(full.slice(s![.., want]).to_owned());
            assert!(bits(share.cols) == bits(expect), "{at}: columns differ");
            let parts = |m: &dpca_bench::fed::Message| -> Vec<(String, Vec<u64>)> {
                m.parts()
                    .map(|(n, a)| (n.to_string(), a.iter().map(|v| v.to_bits()).collect()))
                    .collect()
            };
            assert_eq!(parts(&share.start), parts(inst.start()), "{at}: start");
        }
    }
}

#[test]
fn svd_columns_over_an_iid_shuffle_equal_the_built_matrix() {
    // m > 2048: the columns come from several generator blocks, scattered by the shuffle.
    let rest = "[data]\ngenerator = \"svd\"\nspectrum = \"geometric\"\nn = 12\nm = 5000\n\
                xi = 1.2\n[partition]\nscheme = \"iid\"\nclients = 5\n[problem]\np = 3\n";
    check(
        "svd, iid",
        &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", rest),
        5,
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
        4,
    );
}

#[test]
fn gaussian_columns_equal_the_built_matrix() {
    let rest = "[data]\ngenerator = \"gaussian\"\nn = 7\nm = 4200\n\
                [partition]\nscheme = \"even\"\nclients = 3\n[problem]\np = 2\n";
    check(
        "gaussian",
        &manifest("faps", "000_87ac87c3d542a13b.txt", "ssi", rest),
        3,
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
            4,
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
            4,
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
        4,
    );
}
