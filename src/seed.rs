//! Seed derivation: one base seed per manifest, one derived stream per named purpose.
//!
//! Hashing names (not positions) means adding a method or a sweep point never changes the
//! data or the starting points of the others.

use ndarray::{Array2, ShapeBuilder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// A 64-bit seed derived from `base` and a list of names.
pub fn derive(base: u64, parts: &[&str]) -> u64 {
    let mut h = Sha256::new();
    h.update(base.to_le_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("sha256 has 32 bytes"))
}

/// A reproducible random stream for `base` and `parts`.
pub fn rng(base: u64, parts: &[&str]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(derive(base, parts))
}

/// An `rows × cols` column-major matrix with iid U[-1, 1] entries drawn column by column.
pub fn uniform_matrix(rows: usize, cols: usize, rng: &mut impl Rng) -> Array2<f64> {
    let data: Vec<f64> = (0..rows * cols)
        .map(|_| rng.random_range(-1.0..=1.0))
        .collect();
    Array2::from_shape_vec((rows, cols).f(), data).expect("length matches shape")
}
