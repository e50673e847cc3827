//! Column partitions of A over clients, as views (no copies).
//!
//! A is stored column-major, so every client's column block A_i is one contiguous slice.
//! The sizes come from the manifest's `PartitionSpec::client_sizes`.

use ndarray::{s, ArrayView2};

/// Views A_1..A_d of consecutive column blocks with the given sizes.
pub fn split_columns<'a>(a: ArrayView2<'a, f64>, sizes: &[usize]) -> Vec<ArrayView2<'a, f64>> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&len| {
            let v = a.slice_move(s![.., start..start + len]);
            start += len;
            v
        })
        .collect()
}
