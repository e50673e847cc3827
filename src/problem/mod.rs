//! Problem kinds: for each, the exact reference solution and the metrics against it.

pub mod subspace;
