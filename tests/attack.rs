//! The leakage attack (FAPS Prop. 2 and 5): the server rebuilds A_1A_1ᵀ from SSI's and
//! LocalPower's transcripts, but not from FAPS's.

mod common;

use common::{setup, small};
use dpca_bench::attack::{leakage_errors, pairs};
use dpca_bench::methods::faps::{Faps, Params};
use dpca_bench::methods::localpower::{LocalPower, Params as LpParams};
use dpca_bench::methods::ssi::Ssi;
use dpca_bench::methods::Method;

const N: usize = 24;
const P: usize = 4;
const D: usize = 3;

/// Attack errors on client 0 after `rounds` rounds of `m`.
fn attack(mut m: Box<dyn Method + '_>, a1: ndarray::ArrayView2<f64>, rounds: usize) -> Vec<f64> {
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.transcript().expect("recorded"), 0);
    assert_eq!(pairs.len(), rounds);
    leakage_errors(a1, &pairs, rounds).unwrap()
}

#[test]
fn ssi_transcript_reveals_the_local_gram_matrix() {
    let s = small(N, 600, P, 1.05, 21);
    let mut st = setup(&s, D);
    st.watch = Some(vec![0]);
    let a1 = st.blocks[0].as_dense().unwrap();
    let k = N.div_ceil(P) + 1;
    let errs = attack(Box::new(Ssi::new(st)), a1, k + 3);
    assert!(errs[0] > 1e-2, "one round cannot reveal it: {:e}", errs[0]);
    assert!(
        errs[k - 1] <= 1e-8,
        "by round {k}: {:e} (all: {errs:?})",
        errs[k - 1]
    );
}

#[test]
fn localpower_transcript_reveals_the_local_gram_matrix() {
    let s = small(N, 600, P, 1.05, 22);
    let mut st = setup(&s, D);
    st.watch = Some(vec![0]);
    let a1 = st.blocks[0].as_dense().unwrap();
    let k = N.div_ceil(P) + 1;
    let errs = attack(
        Box::new(LocalPower::new(st, LpParams::default())),
        a1,
        k + 3,
    );
    assert!(
        errs[k - 1] <= 1e-8,
        "by round {k}: {:e} (all: {errs:?})",
        errs[k - 1]
    );
}

#[test]
fn faps_transcript_does_not_reveal_it() {
    let s = small(N, 600, P, 1.05, 23);
    let mut st = setup(&s, D);
    st.watch = Some(vec![0]);
    let a1 = st.blocks[0].as_dense().unwrap();
    let errs = attack(Box::new(Faps::new(st, Params::default())), a1, 40);
    let min = errs.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(
        min >= 1e-1,
        "FAPS leaked: min error {min:e} (all: {errs:?})"
    );
}
