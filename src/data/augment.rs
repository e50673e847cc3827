//! Random features appended to a dataset, the sparse PCA paper's WDBC* (§IV.B) and its non-IID
//! variant (§IV.D): features a good sparse loading gives no weight.
//!
//! Orientation: features are rows, so the noise features are rows appended below the data's.

use crate::seed;
use crate::spec::Noise;
use ndarray::{concatenate, s, Array2, Axis, ShapeBuilder};
use rand::Rng;
use rand_distr::StandardNormal;

/// Share of exact zeros in the other clients' noise blocks (§IV.D: "80% being exactly 0").
pub const CLIENT_BLOCKS_ZEROS: f64 = 0.8;

/// `x` (n₀×m) with `count` noise features appended below; `sizes` are the clients' contiguous
/// sample blocks (used by [`Noise::ClientBlocks`]).
pub fn append_noise(
    x: &Array2<f64>,
    count: usize,
    noise: Noise,
    sizes: &[usize],
    seed: u64,
) -> Array2<f64> {
    let m = x.ncols();
    let mut rand = Array2::<f64>::zeros((count, m).f());
    match noise {
        Noise::Uniform => {
            let mut rng = seed::rng(seed, &["noise-uniform"]);
            rand.mapv_inplace(|_| rng.random::<f64>());
        }
        Noise::ClientBlocks => {
            let k = sizes.len();
            // Contiguous feature blocks, the first count % k one feature longer.
            let blocks: Vec<usize> = (0..k)
                .map(|i| count / k + usize::from(i < count % k))
                .collect();
            let (mut col, mut row) = (0, 0);
            for (c, (&mc, &fc)) in sizes.iter().zip(&blocks).enumerate() {
                let mut rng = seed::rng(seed, &["noise-client", &c.to_string()]);
                let sd = rng.random::<f64>().sqrt();
                let mut part = rand.slice_mut(s![.., col..col + mc]);
                for ((f, _), v) in part.indexed_iter_mut() {
                    *v = if (row..row + fc).contains(&f) {
                        sd * rng.sample::<f64, _>(StandardNormal)
                    } else if rng.random::<f64>() < CLIENT_BLOCKS_ZEROS {
                        0.0
                    } else {
                        rng.random::<f64>()
                    };
                }
                col += mc;
                row += fc;
            }
        }
    }
    let out = concatenate(Axis(0), &[x.view(), rand.view()]).expect("same sample count");
    crate::linalg::to_f_order(out.view())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_noise_is_appended_below_in_unit_interval() {
        let x = Array2::<f64>::from_elem((3, 50), 7.0);
        let y = append_noise(&x, 20, Noise::Uniform, &[50], 1);
        assert_eq!(y.dim(), (23, 50));
        assert!(y.slice(s![..3, ..]).iter().all(|v| *v == 7.0));
        assert!(y.slice(s![3.., ..]).iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn client_blocks_put_each_clients_gaussian_block_on_its_own_features() {
        let x = Array2::<f64>::zeros((2, 400));
        let y = append_noise(&x, 100, Noise::ClientBlocks, &[200, 200], 3);
        let noise = y.slice(s![2.., ..]);
        // Client 0's own block (features 0..50) is Gaussian: it has negative entries; its
        // other block is non-negative and about 80% exact zeros.
        let own = noise.slice(s![..50, ..200]);
        let other = noise.slice(s![50.., ..200]);
        assert!(own.iter().any(|v| *v < 0.0));
        assert!(other.iter().all(|v| (0.0..1.0).contains(v)));
        let zeros = other.iter().filter(|v| **v == 0.0).count() as f64 / other.len() as f64;
        assert!((zeros - CLIENT_BLOCKS_ZEROS).abs() < 0.03, "{zeros}");
        assert!(noise.slice(s![50.., 200..]).iter().any(|v| *v < 0.0));
    }
}
