//! The leakage attack (FAPS Prop. 2 and 5): the server rebuilds A_1A_1ᵀ from SSI's and
//! LocalPower's transcripts, but not from FAPS's; and the sparse consensus-ADMM methods' replies
//! give it C_iw back through the server's own bookkeeping.

use crate::common;

use crate::common::params;
use crate::common::{method, small};
use dpca_bench::attack::{leak, leakage_errors, leakage_norms, pairs};
use dpca_bench::fed::Network;
use dpca_bench::linalg::fro2;
use dpca_bench::methods::registry::lookup;
use ndarray::Array2;

const N: usize = 24;
const P: usize = 4;
const D: usize = 3;

/// Attack errors on client 0 after `rounds` rounds of method `name`.
fn attack(name: &str, seed: u64, rounds: usize) -> Vec<f64> {
    let s = small(N, 600, P, 1.05, seed);
    let mut m = method(name, toml::Table::new(), &s, D);
    m.net.record_transcript(vec![0], None);
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.net.transcript().expect("recorded"), 0).unwrap();
    assert_eq!(pairs.len(), rounds);
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    leakage_errors(a1, &pairs, rounds, false).unwrap()
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

/// The rounds' SVDs run in parallel: the errors are the same bits on 1 thread and on 3, and
/// the first j of them do not depend on how many rounds are evaluated.
#[test]
fn attack_errors_do_not_depend_on_threads() {
    let s = small(N, 600, P, 1.05, 31);
    let mut m = method("ssi", toml::Table::new(), &s, D);
    m.net.record_transcript(vec![0], None);
    let rounds = N.div_ceil(P) + 2;
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.net.transcript().unwrap(), 0).unwrap();
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    let on = |threads: usize, k: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let errs = pool.install(|| leakage_norms(a1, &pairs, k, false).unwrap());
        errs.iter()
            .map(|e| (e.relative.to_bits(), e.absolute.to_bits()))
            .collect::<Vec<_>>()
    };
    let one = on(1, rounds);
    assert_eq!(one.len(), rounds);
    assert_eq!(one, on(3, rounds));
    assert_eq!(one[..3], on(3, 3)[..]);
}

/// The unscaled error (FAPS fig. 1 prints it) is ‖Φ − A_1A_1ᵀ‖_F: the relative one times
/// ‖A_1A_1ᵀ‖_F, and before the broadcasts span ℝⁿ at least the mass of A_1A_1ᵀ outside them.
#[test]
fn unscaled_attack_error_is_the_relative_one_times_the_local_gram_norm() {
    let s = small(N, 600, P, 1.05, 26);
    let mut m = method("ssi", toml::Table::new(), &s, D);
    m.net.record_transcript(vec![0], None);
    let rounds = N.div_ceil(P) + 2;
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.net.transcript().unwrap(), 0).unwrap();
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    let gram = a1.dot(&a1.t());
    let norm = fro2(gram.view()).sqrt();
    let errs = leakage_norms(a1, &pairs, rounds, false).unwrap();
    assert_eq!(errs.len(), rounds);
    for e in &errs {
        assert!(
            (e.absolute - e.relative * norm).abs() <= 1e-12 * norm,
            "{e:?} with ‖A_1A_1ᵀ‖_F = {norm}"
        );
    }
    // Round 1: Φ = Y Zᵀ (Z orthonormal), so the error is ‖Y Zᵀ − M‖_F computed directly.
    let (z, y) = &pairs[0];
    let direct = fro2((&y.dot(&z.t()) - &gram).view()).sqrt();
    assert!(
        (errs[0].absolute - direct).abs() <= 1e-10 * norm,
        "{} vs {direct}",
        errs[0].absolute
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

/// The server-side reconstruction of [`dpca_bench::attack::admm`] on client 0 after `rounds`
/// rounds of a consensus-ADMM sparse method: the leak, client 0's data and the attack errors by
/// round (None where the round leaked nothing).
fn admm_attack(
    name: &str,
    text: &str,
    seed: u64,
    rounds: usize,
) -> (dpca_bench::attack::Leak, Array2<f64>, Vec<Option<f64>>) {
    let s = small(N, 600, P, 1.05, seed);
    let p = params(text);
    let mut m = method(name, p.clone(), &s, D);
    m.net.record_transcript(vec![0], None);
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let entry = lookup(name).unwrap();
    let resolved = (entry.check)(&p).unwrap();
    let l = leak(
        entry.transcript,
        &resolved,
        m.net.transcript().unwrap(),
        0,
        rounds,
    )
    .unwrap();
    let a1 = common::even_blocks(s.a.view(), D)[0]
        .as_dense()
        .unwrap()
        .to_owned();
    let mut by_round = vec![None; rounds + 1];
    for ((round, ..), e) in l.pairs.iter().zip(l.errors(a1.view(), rounds).unwrap()) {
        by_round[*round] = Some(e);
    }
    (l, a1, by_round)
}

/// FASPCA's normalised closed-form step, with the server's mirror of u_i and C_i's symmetry,
/// gives C_iw_{t−1} exactly: once the loadings span ℝⁿ (n = 24 here, one per round) A_1A_1ᵀ
/// is rebuilt.
#[test]
fn faspca_transcript_reveals_the_local_gram_matrix() {
    let (_, _, errs) = admm_attack("faspca", "lambda = 0.01\nrho = 10.0", 24, 2 * N + 10);
    assert!(errs[1].is_none(), "round 1 starts from the private w⁰");
    assert!(errs[N / 2].unwrap() > 1e-1, "too early: {errs:?}");
    let last = errs.last().unwrap().unwrap();
    assert!(
        last <= 1e-6,
        "after {} rounds: {last:e} ({errs:?})",
        2 * N + 10
    );
}

/// FSSPCA's w_t is stationary for its local problem: each round gives C_iw_t up to the unknown
/// multiplier, which C_i's symmetry pins down except for a shift αw_t common to all rounds (the
/// local problem is the same for C_i + αI).
#[test]
fn fsspca_transcript_reveals_the_local_products_up_to_a_shift() {
    let text = "lambda1 = 0.01\nlambda2 = 0.01\nrho = 10.0\ninner_tol = 0.0\ninner_max = 1000";
    let (l, a1, _) = admm_attack("fsspca", text, 25, 12);
    assert!(l.up_to_shift);
    let c = a1.dot(&a1.t());
    // One α for every round: fitted on round 2, checked on all later rounds.
    let shift_fit =
        |x: &Array2<f64>, y: &Array2<f64>| (&(y - &c.dot(x)) * x).sum() / fro2(x.view());
    let alpha = shift_fit(&l.pairs[1].1, &l.pairs[1].2);
    for (round, x, y) in &l.pairs[1..] {
        let cx = c.dot(x);
        let rel = fro2((&(y - &cx) - &(x * alpha)).view()).sqrt() / fro2(cx.view()).sqrt();
        // 1e-2: the multipliers are only weakly determined once the loadings barely move.
        assert!(rel <= 1e-2, "round {round}: ‖y − (C + αI)x‖/‖Cx‖ = {rel:e}");
    }
    // Without the shift the products are wrong: α is not small next to C_i.
    assert!(alpha.abs() > 1e-2 * fro2(c.view()).sqrt());
}

/// Attack errors on client 0 after `rounds` rounds of a method of DSSAL1's model (μ in the
/// common start, as the sparse family gives it).
fn attack_mu(name: &str, seed: u64, rounds: usize) -> Vec<f64> {
    let s = small(N, 600, P, 1.05, seed);
    let start = dpca_bench::fed::Message::new()
        .with("z", s.z0.clone())
        .with_scalar("mu", 0.01);
    let blocks = common::even_blocks(s.a.view(), D);
    let mut m = dpca_bench::methods::registry::Running::named(
        name,
        &toml::Table::new(),
        &start,
        7,
        blocks,
        N,
    )
    .unwrap();
    m.net.record_transcript(vec![0], None);
    for _ in 0..rounds {
        m.step().unwrap();
    }
    let pairs = pairs(m.net.transcript().expect("recorded"), 0).unwrap();
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    leakage_errors(a1, &pairs, pairs.len(), false).unwrap()
}

#[test]
fn federated_manpg_transcript_reveals_the_local_gram_matrix() {
    // Every round (line-search trials included) answers A_1A_1ᵀZ, as SSI's do.
    let errs = attack_mu("manpg", 24, 2 * N.div_ceil(P));
    let last = *errs.last().unwrap();
    assert!(last <= 1e-8, "federated ManPG: {last:e} (all: {errs:?})");
}

#[test]
fn dssal1_transcript_does_not_reveal_it() {
    let errs = attack_mu("dssal1", 25, 40);
    let min = errs.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(
        min >= 1e-1,
        "DSSAL1 leaked: min error {min:e} (all: {errs:?})"
    );
}

/// A transcript limited to the attacked rounds keeps exactly those rounds, and the attack on it
/// equals the attack on the full transcript (the runner limits it to `attack.max_rounds`).
#[test]
fn limited_transcript_keeps_the_first_rounds_and_the_same_attack() {
    let s = small(N, 600, P, 1.05, 27);
    let record = |limit: Option<usize>| {
        let mut m = method("ssi", toml::Table::new(), &s, D);
        m.net.record_transcript(vec![0], limit);
        for _ in 0..9 {
            m.step().unwrap();
        }
        pairs(m.net.transcript().unwrap(), 0).unwrap()
    };
    let (full, limited) = (record(None), record(Some(4)));
    assert_eq!((full.len(), limited.len()), (9, 4));
    let a1 = common::even_blocks(s.a.view(), D)[0].as_dense().unwrap();
    assert_eq!(
        leakage_errors(a1, &full, 4, false).unwrap(),
        leakage_errors(a1, &limited, 4, false).unwrap()
    );
}
