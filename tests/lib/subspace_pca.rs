//! Methods against LAPACK: SSI and FAPS find the exact dominant subspace; accounting is exact.

use crate::common;

use crate::common::{method, params, small, z};
use dpca_bench::data::matrix::Block;
use dpca_bench::fed::Network;
use dpca_bench::methods::registry::Running;
use dpca_bench::problem::subspace::Metrics;

fn metrics(s: &common::Small, r: &Running) -> Metrics {
    s.reference
        .metrics(Block::Dense(s.a.view()), z(r).view())
        .unwrap()
}

/// Run until the subspace stops moving (or `max` steps); return the final metrics.
fn run(m: &mut Running, s: &common::Small, max: usize) -> Metrics {
    for _ in 0..max {
        m.step().unwrap();
        let met = metrics(s, m);
        if met.subspace_dist < 1e-11 {
            return met;
        }
    }
    metrics(s, m)
}

#[test]
fn ssi_subspace_matches_lapack() {
    let s = small(60, 600, 4, 1.5, 1);
    let mut m = method("ssi", toml::Table::new(), &s, 5);
    let met = run(&mut m, &s, 500);
    assert!(
        met.subspace_dist <= 1e-8,
        "SSI ‖sinΘ‖ = {:e}",
        met.subspace_dist
    );
    assert!(met.sv_err <= 1e-8, "SSI sv_err = {:e}", met.sv_err);
    assert!(met.kkt <= 1e-8, "SSI kkt = {:e}", met.kkt);
}

#[test]
fn faps_subspace_matches_lapack_for_every_inner_rule() {
    let s = small(60, 600, 4, 1.5, 2);
    for inner in ["fixed", "rule", "kkt"] {
        let mut m = method("faps", params(&format!("inner = \"{inner}\"")), &s, 5);
        let met = run(&mut m, &s, 1000);
        assert!(
            met.subspace_dist <= 1e-8,
            "FAPS {inner} ‖sinΘ‖ = {:e}",
            met.subspace_dist
        );
        assert!(met.sv_err <= 1e-8, "FAPS {inner} sv_err = {:e}", met.sv_err);
    }
}

#[test]
fn faps_objective_is_the_objective_of_the_broadcast_iterate() {
    let s = small(30, 300, 3, 1.3, 3);
    let mut m = method("faps", toml::Table::new(), &s, 4);
    for _ in 0..5 {
        let before = metrics(&s, &m).objective;
        let f = m.step().unwrap().objective.unwrap();
        assert!((f - before).abs() <= 1e-10 * before, "{f} vs {before}");
    }
}

#[test]
fn ssi_accounting_is_exact() {
    // SSI with d clients for k rounds: uplink 8·k·d·n·p bytes, downlink 8·k·n·p (broadcast once).
    let (n, p, d, k) = (50usize, 3usize, 7usize, 11u64);
    let s = small(n, 420, p, 1.2, 4);
    let mut m = method("ssi", toml::Table::new(), &s, d);
    for _ in 0..k {
        m.step().unwrap();
    }
    let c = m.net.counters();
    let (n, p, d) = (n as u64, p as u64, d as u64);
    assert_eq!(c.rounds, k);
    assert_eq!(c.bytes_up, 8 * k * d * n * p);
    assert_eq!(c.bytes_down, 8 * k * n * p);
    // n-vectors: every number counts, divided by n.
    assert_eq!(c.vectors(), (k * (d + 1) * p) as f64);
    assert!(c.bytes_up_per_client.iter().all(|&b| b == 8 * k * n * p));
}

#[test]
fn faps_accounting_counts_its_scalar() {
    // FAPS sends Y_i (n×p) plus one scalar (its share of the objective) per client and round.
    let (n, p, d, k) = (40usize, 2usize, 3usize, 6u64);
    let s = small(n, 300, p, 1.2, 5);
    let mut m = method("faps", toml::Table::new(), &s, d);
    for _ in 0..k {
        m.step().unwrap();
    }
    let c = m.net.counters();
    let (n, p, d) = (n as u64, p as u64, d as u64);
    assert_eq!(c.rounds, k);
    assert_eq!(c.bytes_up, 8 * k * d * (n * p + 1));
    assert_eq!(c.bytes_down, 8 * k * n * p);
    // The scalars are counted as vectors too, as fractions of an n-vector, never rounded away.
    let expected = (k * d * (n * p + 1) + k * n * p) as f64 / n as f64;
    assert!((c.vectors() - expected).abs() < 1e-12 * expected);
}

#[test]
fn localpower_with_q_one_is_exactly_ssi() {
    let s = small(40, 500, 3, 1.2, 6);
    let mut ssi = method("ssi", toml::Table::new(), &s, 4);
    let mut lp = method("localpower", params("q0 = 1"), &s, 4);
    for k in 0..30 {
        let (a, b) = (ssi.step().unwrap(), lp.step().unwrap());
        assert_eq!(z(&ssi), z(&lp), "iterate {k}");
        assert_eq!(a.objective, b.objective, "objective {k}");
    }
    assert_eq!(ssi.net.counters().bytes_up, lp.net.counters().bytes_up);
}

#[test]
fn localpower_subspace_matches_lapack_for_every_alignment() {
    let s = small(60, 600, 4, 1.5, 7);
    for align in ["procrustes", "sign", "none"] {
        let mut m = method("localpower", params(&format!("align = \"{align}\"")), &s, 5);
        let met = run(&mut m, &s, 500);
        assert!(
            met.subspace_dist <= 1e-8,
            "LocalPower {align} ‖sinΘ‖ = {:e}",
            met.subspace_dist
        );
    }
}

#[test]
fn localpower_uploads_its_basis_only_while_q_exceeds_one() {
    // q = 8, 4, 2, 1, 1: three aligned rounds send Y_i, Z_i and a scalar, then plain Y_i.
    let (n, p, d) = (30u64, 2u64, 3u64);
    let s = small(30, 300, 2, 1.3, 8);
    let mut m = method("localpower", toml::Table::new(), &s, 3);
    for _ in 0..5 {
        m.step().unwrap();
    }
    let aligned = 3 * d * 8 * (2 * n * p + 1);
    let plain = 2 * d * 8 * n * p;
    assert_eq!(m.net.counters().bytes_up, aligned + plain);
    assert_eq!(m.net.counters().bytes_down, 5 * 8 * n * p);
}

#[test]
fn a_client_is_built_from_its_own_block_only() {
    // The registry hands each client exactly its block: a client's reply to Z is A_iA_iᵀZ for
    // its own A_i, which the transcript shows for every client.
    let s = small(20, 90, 2, 1.2, 9);
    let mut m = method("ssi", toml::Table::new(), &s, 3);
    m.net.record_transcript(vec![0, 1, 2], None);
    m.step().unwrap();
    let t = m.net.transcript().unwrap();
    for (i, b) in common::even_blocks(s.a.view(), 3).into_iter().enumerate() {
        let (msg, reply) = t.pairs(i).next().unwrap();
        let want = b.gram_times(msg.get("z").unwrap().view());
        assert_eq!(reply.get("y").unwrap(), &want, "client {i}");
    }
}
