//! Methods for robust PCA, low rank plus sparse (DCF-PCA paper): DCF-PCA, CF-PCA, APGM, inexact ALM. One file per method, named after the paper's name for it.

pub mod apgm;
pub mod dcfpca;
pub mod ialm;
