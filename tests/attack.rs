//! The leakage attack (FAPS Prop. 2 and 5): the server rebuilds A_1A_1ᵀ from SSI's and
//! LocalPower's transcripts, but not from FAPS's.

mod common;

use common::{method, small};
use dpca_bench::attack::{leakage_errors, pairs};
use dpca_bench::fed::Network;

const N: usize = 24;
const P: usize = 4;
const D: usize = 3;

/// Attack errors on client 0 after `rounds` rounds of method `name`.
fn attack(name: &str, seed: u64, rounds: usize) -> Vec<f64> {
    let s = small(N, 600, P, 1.05, seed);
    let mut m = method(name, toml::Table::new(), &s, D);
    m.net.record_transcript(vec![0]);
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.net.transcript().expect("recorded"), 0).unwrap();
    assert_eq!(pairs.len(), rounds);
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    leakage_errors(a1, &pairs, rounds).unwrap()
}

#[test]
fn ssi_transcript_reveals_the_local_gram_matrix() {
    let k = N.div_ceil(P) + 1;
    let errs = attack("ssi", 21, k + 3);
    assert!(errs[0] > 1e-2, "one round cannot reveal it: {:e}", errs[0]);
    assert!(
        errs[k - 1] <= 1e-8,
        "by round {k}: {:e} (all: {errs:?})",
        errs[k - 1]
    );
}

#[test]
fn localpower_transcript_reveals_the_local_gram_matrix() {
    let k = N.div_ceil(P) + 1;
    let errs = attack("localpower", 22, k + 3);
    assert!(
        errs[k - 1] <= 1e-8,
        "by round {k}: {:e} (all: {errs:?})",
        errs[k - 1]
    );
}

#[test]
fn faps_transcript_does_not_reveal_it() {
    let errs = attack("faps", 23, 40);
    let min = errs.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(
        min >= 1e-1,
        "FAPS leaked: min error {min:e} (all: {errs:?})"
    );
}
