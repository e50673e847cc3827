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
pub mod spiked;
pub mod synthetic;

use ndarray::{Array2, ShapeBuilder};
use rand::Rng;

/// An `rows × cols` column-major matrix with iid U[-1, 1] entries drawn column by column.
pub fn uniform_matrix(rows: usize, cols: usize, rng: &mut impl Rng) -> Array2<f64> {
    let data: Vec<f64> = (0..rows * cols)
        .map(|_| rng.random_range(-1.0..=1.0))
        .collect();
    Array2::from_shape_vec((rows, cols).f(), data).expect("length matches shape")
}
