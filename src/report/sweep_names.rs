//! Readable axis titles for the manifest keys a sweep varies (`data.n` → "n (features)"),
//! named as the schema defines them (src/spec/schema.rs), not as any one paper does.

use crate::spec::Kind;

/// The axis title of sweep key `key` in a manifest of family `kind`; an unknown key reads as
/// its last segment.
pub fn axis_name(key: &str, kind: Kind) -> String {
    let name = match key {
        "data.n" => "n (features)",
        "data.m" => "m (samples, all clients)",
        "data.xi" => "ξ (spectrum decay Σ_ii = ξ^(1−i))",
        "data.kappa" => "κ (condition number)",
        "data.rank" => "rank r of L₀",
        "data.sparsity" => "sparsity s (fraction of S₀ non-zero)",
        "data.delta" => "eigengap δ",
        "partition.clients" => "d (clients)",
        "problem.p" => crate::problem::family(kind).p_axis(),
        "problem.mu" => "μ (weight of ‖Z‖₁)",
        other => other.rsplit('.').next().unwrap_or(other),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_as_words_not_paths() {
        assert_eq!(axis_name("data.n", Kind::Subspace), "n (features)");
        assert_eq!(axis_name("problem.p", Kind::Sparse), "r (loadings)");
        assert_eq!(axis_name("data.new_key", Kind::Subspace), "new_key");
    }
}
