//! Methods against LAPACK: SSI and FAPS find the exact dominant subspace; accounting is exact.

mod common;

use common::{setup, small};
use dpca_bench::data::matrix::Block;
use dpca_bench::methods::faps::{Faps, InnerRule, Params};
use dpca_bench::methods::ssi::Ssi;
use dpca_bench::methods::Method;

/// Run until the subspace stops moving (or `max` steps); return the final metrics.
fn run(
    m: &mut dyn Method,
    s: &common::Small,
    max: usize,
) -> dpca_bench::problem::subspace::Metrics {
    for _ in 0..max {
        m.step().unwrap();
        let met = s
            .reference
            .metrics(Block::Dense(s.a.view()), m.estimate().view())
            .unwrap();
        if met.subspace_dist < 1e-11 {
            return met;
        }
    }
    s.reference
        .metrics(Block::Dense(s.a.view()), m.estimate().view())
        .unwrap()
}

#[test]
fn ssi_subspace_matches_lapack() {
    let s = small(60, 600, 4, 1.5, 1);
    let mut m = Ssi::new(setup(&s, 5));
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
    for inner in [InnerRule::Fixed, InnerRule::Rule, InnerRule::Kkt] {
        let prm = Params {
            inner,
            ..Params::default()
        };
        let mut m = Faps::new(setup(&s, 5), prm);
        let met = run(&mut m, &s, 1000);
        assert!(
            met.subspace_dist <= 1e-8,
            "FAPS {inner:?} ‖sinΘ‖ = {:e}",
            met.subspace_dist
        );
        assert!(
            met.sv_err <= 1e-8,
            "FAPS {inner:?} sv_err = {:e}",
            met.sv_err
        );
    }
}

#[test]
fn faps_objective_is_the_objective_of_the_broadcast_iterate() {
    let s = small(30, 300, 3, 1.3, 3);
    let mut m = Faps::new(setup(&s, 4), Params::default());
    for _ in 0..5 {
        let z = m.estimate().clone();
        let f = m.step().unwrap().objective.unwrap();
        let exact = s
            .reference
            .metrics(Block::Dense(s.a.view()), z.view())
            .unwrap()
            .objective;
        assert!((f - exact).abs() <= 1e-10 * exact, "{f} vs {exact}");
    }
}

#[test]
fn ssi_accounting_is_exact() {
    // SSI with d clients for k rounds: uplink 8·k·d·n·p bytes, downlink 8·k·n·p (broadcast once).
    let (n, p, d, k) = (50usize, 3usize, 7usize, 11u64);
    let s = small(n, 420, p, 1.2, 4);
    let mut m = Ssi::new(setup(&s, d));
    for _ in 0..k {
        m.step().unwrap();
    }
    let c = m.counters();
    let (n, p, d) = (n as u64, p as u64, d as u64);
    assert_eq!(c.rounds, k);
    assert_eq!(c.bytes_up, 8 * k * d * n * p);
    assert_eq!(c.bytes_down, 8 * k * n * p);
    assert_eq!(c.vectors_up, k * d * p);
    assert_eq!(c.vectors_down, k * p);
    assert!(c.bytes_up_per_client.iter().all(|&b| b == 8 * k * n * p));
}

#[test]
fn faps_accounting_counts_its_scalar() {
    // FAPS sends Y_i (n×p) plus one scalar (its share of the objective) per client and round.
    let (n, p, d, k) = (40usize, 2usize, 3usize, 6u64);
    let s = small(n, 300, p, 1.2, 5);
    let mut m = Faps::new(setup(&s, d), Params::default());
    for _ in 0..k {
        m.step().unwrap();
    }
    let c = m.counters();
    let (n, p, d) = (n as u64, p as u64, d as u64);
    assert_eq!(c.rounds, k);
    assert_eq!(c.bytes_up, 8 * k * d * (n * p + 1));
    assert_eq!(c.bytes_down, 8 * k * n * p);
}

#[test]
fn localpower_with_q_one_is_exactly_ssi() {
    use dpca_bench::methods::localpower::{LocalPower, Params as LpParams};
    let s = small(40, 500, 3, 1.2, 6);
    let mut ssi = Ssi::new(setup(&s, 4));
    let mut lp = LocalPower::new(
        setup(&s, 4),
        LpParams {
            q0: 1,
            ..LpParams::default()
        },
    );
    for k in 0..30 {
        let (a, b) = (ssi.step().unwrap(), lp.step().unwrap());
        assert_eq!(ssi.estimate(), lp.estimate(), "iterate {k}");
        assert_eq!(a.objective, b.objective, "objective {k}");
    }
    assert_eq!(ssi.counters().bytes_up, lp.counters().bytes_up);
}

#[test]
fn localpower_subspace_matches_lapack_for_every_alignment() {
    use dpca_bench::methods::localpower::{Align, LocalPower, Params as LpParams};
    let s = small(60, 600, 4, 1.5, 7);
    for align in [Align::Procrustes, Align::Sign, Align::None] {
        let mut m = LocalPower::new(
            setup(&s, 5),
            LpParams {
                align,
                ..LpParams::default()
            },
        );
        let met = run(&mut m, &s, 500);
        assert!(
            met.subspace_dist <= 1e-8,
            "LocalPower {align:?} ‖sinΘ‖ = {:e}",
            met.subspace_dist
        );
    }
}

#[test]
fn localpower_uploads_its_basis_only_while_q_exceeds_one() {
    use dpca_bench::methods::localpower::{LocalPower, Params as LpParams};
    // q = 8, 4, 2, 1, 1: three aligned rounds send [Y_i | Z_i] and a scalar, then plain Y_i.
    let (n, p, d) = (30u64, 2u64, 3u64);
    let s = small(30, 300, 2, 1.3, 8);
    let mut m = LocalPower::new(setup(&s, 3), LpParams::default());
    for _ in 0..5 {
        m.step().unwrap();
    }
    let aligned = 3 * d * 8 * (2 * n * p + 1);
    let plain = 2 * d * 8 * n * p;
    assert_eq!(m.counters().bytes_up, aligned + plain);
    assert_eq!(m.counters().bytes_down, 5 * 8 * n * p);
}
