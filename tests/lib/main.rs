//! Integration tests that call the library in-process: loaders, manifests, generators,
//! partitions, methods by family, the attack, MPI shares, the cache, fetching and figures. One
//! binary of modules, so the library is linked once for all of them (`cargo test --test lib --
//! share::` runs one module).

mod common;

mod attack;
mod cache_hardening;
/// Every registered method through the same properties.
mod conformance;
mod fetch;
mod loader_fuzz;
mod loaders;
mod manifest;
mod manifest_fuzz;
/// The NumPy twins of the bench rounds against the Rust rounds.
mod numpy_twin;
/// The paper registry and the repository's scorecard.
mod papers;
mod partition;
mod plot;
mod results_fuzz;
/// The robust-PCA family's methods.
mod robust_pca;
mod share;
/// Sparse (CSR) data held as such, against the same data dense.
mod sparse_data;
/// The sparse-PCA family's methods.
mod sparse_pca;
/// The subspace family's methods (SSI, FAPS, LocalPower) against LAPACK.
mod subspace_pca;
mod synthetic;
