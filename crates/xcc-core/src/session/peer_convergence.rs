//! ERICA, BFYZ and COBB on the four hand-solvable networks (single link, parking lot,
//! two-level bottleneck, demand-limited session), driven by [`super::test_network`], against
//! the max-min oracle. Tolerances and why:
//!
//! - BFYZ (reconstructed): exact (1e-6 relative): the fixed point of consistent marking is the
//!   max-min allocation, as the paper claims for its protocol.
//! - COBB (reconstructed): exact (1e-6) on these networks, where T (70 ms) exceeds every
//!   round-trip time, as the protocol requires.
//! - ERICA: approximately max-min, by design. A link whose load factor z lies in
//!   `[1, 1 + delta]` is "underloaded" and hands every session `max(MaxAllocPrevious,
//!   CCR / z)`, so any allocation with equal bottleneck shares and total load up to
//!   `(1 + delta) U C` is a fixed point. The test therefore asks for rates between the oracle's
//!   (with capacities `U C`) and `1 + delta` times it, within 1 % for the discrete ticks.

use super::test_network::{networks, run};
use super::SessionProtocol;
use crate::algorithms::bfyz::{Bfyz, BfyzParams};
use crate::algorithms::cobb::{Cobb, CobbParams};
use crate::algorithms::erica::{Erica, EricaParams};
use crate::time::{Dur, Time};

fn relative_errors<P: SessionProtocol>(
    params: &P::Params,
    utilisation: f64,
    secs: u64,
) -> Vec<(&'static str, Vec<f64>)> {
    networks()
        .into_iter()
        .map(|(name, net)| {
            let want = net.oracle(utilisation);
            let got = run::<P>(params, &net, Time::ZERO + Dur::from_secs(secs));
            let err = got
                .iter()
                .zip(&want)
                .enumerate()
                .map(|(s, (g, w))| {
                    let g = g.unwrap_or_else(|| panic!("{name}: session {s} has no rate"));
                    (g - w) / w
                })
                .collect();
            (name, err)
        })
        .collect()
}

#[test]
fn bfyz_converges_to_max_min_exactly() {
    for (name, err) in relative_errors::<Bfyz>(&BfyzParams::default(), 1.0, 5) {
        for (s, e) in err.iter().enumerate() {
            assert!(e.abs() < 1e-6, "BFYZ {name}: session {s} off by {:.3e}", e);
        }
    }
}

#[test]
fn bfyz_without_the_floor_converges_too() {
    let mut p = BfyzParams::default();
    p.link.floor_c_over_n = false;
    for (name, err) in relative_errors::<Bfyz>(&p, 1.0, 5) {
        for (s, e) in err.iter().enumerate() {
            assert!(e.abs() < 1e-6, "BFYZ (no floor) {name}: session {s} off by {:.3e}", e);
        }
    }
}

#[test]
fn cobb_converges_to_max_min_when_the_period_exceeds_the_rtt() {
    for (name, err) in relative_errors::<Cobb>(&CobbParams::default(), 1.0, 10) {
        for (s, e) in err.iter().enumerate() {
            assert!(e.abs() < 1e-6, "COBB {name}: session {s} off by {:.3e}", e);
        }
    }
}

#[test]
fn erica_converges_to_within_its_delta_band_above_max_min() {
    for u in [1.0, 0.9] {
        let mut p = EricaParams::default();
        p.link.target_utilisation = u;
        let delta = p.link.delta;
        for (name, err) in relative_errors::<Erica>(&p, u, 5) {
            for (s, e) in err.iter().enumerate() {
                assert!(
                    *e > -0.01 && *e < delta + 0.01,
                    "ERICA U = {u} {name}: session {s} at {:+.2} % of max-min",
                    100.0 * e
                );
            }
        }
    }
}
