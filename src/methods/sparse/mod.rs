//! Methods for sparse PCA (the federated sparse PCA paper and DSSAL1's): FSSPCA, FASPCA, PCA, ManPG, DSSAL1, consensus ADMM. One file per method, named after the paper's name for it.

pub mod consensus_admm;
pub mod dssal1;
pub mod faspca;
pub mod fsspca;
pub mod manpg;
pub mod pca;
