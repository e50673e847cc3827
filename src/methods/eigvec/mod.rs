//! Methods for the leading eigenvector (CEDRE paper): CEDRE and its baselines. One file per method, named after the paper's name for it.

pub mod cedre;
pub mod common;
pub mod dispca_b;
pub mod dispca_l;
pub mod dsi;
pub mod ilea;
pub mod rgd;
