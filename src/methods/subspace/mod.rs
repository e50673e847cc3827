//! Methods for the dominant subspace (FAPS paper): SSI, LocalPower, FAPS. One file per method, named after the paper's name for it.

pub mod faps;
pub mod localpower;
pub mod ssi;
