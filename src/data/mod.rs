//! Data: synthetic generators, the on-disk matrix cache, and client partitions.

pub mod augment;
pub mod cache;
pub mod datasets;
pub mod eigengap;
pub mod fetch;
pub mod loaders;
pub mod matrix;
pub mod own;
pub mod partition;
pub mod prepare;
pub mod reads;
pub mod spiked;
pub mod synthetic;
