//! PIQI-RCP's claimed properties on a discrete-time model of one link, driving the real router
//! (`xcc_core::algorithms::piqi_rcp::PiqiRcpRouter`) through its public interface, against the RCP law of
//! protocols.md section 3.2 written here as a test-only reference (RCP itself lives elsewhere).
//!
//! Model: every 5 ms (the router's T) flow `i` puts `R(n - d_i) T` bits into the link, `R` the
//! rate the link advertised `d_i` intervals before (`d_i` = its RTT in intervals); the queue
//! integrates `y - C`. One aggregate packet per flow and interval carries the bits and the
//! flow's RTT, as real packets would.

use xcc_core::algorithms::piqi_rcp::PiqiRcpHeader;
use xcc_core::algorithms::piqi_rcp::{PiqiRcpKappa, PiqiRcpRouter, PiqiRcpRouterConfig};
use xcc_core::link::{LinkAlgorithm, QueueView};
use xcc_core::wire::{CongestionHeader, Segment, SegmentKind};
use xcc_core::{Dur, FlowId, Packet, Time};

const T: f64 = 0.005;

struct NoQueue;
impl QueueView for NoQueue {
    fn backlog_bytes(&self) -> u64 {
        0
    }
    fn backlog_packets(&self) -> u32 {
        0
    }
    fn idle_since(&self) -> Option<Time> {
        None
    }
    fn rate_bps(&self) -> u64 {
        0
    }
    fn visit_from_tail(&self, _f: &mut dyn FnMut(FlowId, u32) -> bool) {}
    fn mark_first_of(&mut self, _flow: FlowId) -> bool {
        false
    }
}

/// A rate law under test: advertised rate after an interval with input `y` (bit/s) and queue
/// `q` (bits), given each flow's (bits sent this interval, RTT).
trait Law {
    fn interval(&mut self, n: u64, flows: &[(f64, f64)], y: f64, q: f64) -> f64;
}

struct Piqi(PiqiRcpRouter);

impl Law for Piqi {
    fn interval(&mut self, n: u64, flows: &[(f64, f64)], _y: f64, _q: f64) -> f64 {
        // Integer nanoseconds: the router's own timer is n x 5 ms exactly.
        let now = Time::ZERO + Dur::from_ms(5 * n);
        for &(bits, rtt) in flows {
            let mut p = Packet {
                wire_bytes: (bits / 8.0).round() as u32,
                seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
                cc: CongestionHeader::PiqiRcp(PiqiRcpHeader::request((rtt * 1e6) as u32)),
                ..Packet::default()
            };
            self.0.on_enqueue(now, &mut p, &mut NoQueue);
        }
        self.0.on_timeout(now + Dur::from_ms(5), 0);
        self.0.rate_bps()
    }
}

/// RCP as protocols.md 3.2 states it (the IWQoS'05 / seed 000 form with the ns-2 control
/// interval): every T_r = min(d, 10 ms), `R <- R [1 + (T_r/d)(alpha (C - y) - beta q/d)/C]`,
/// `d` the byte-weighted mean RTT, clamped to [one 1000-B packet per 100 RTTs, C]; alpha 0.4,
/// beta 1 (seed 000's values).
struct RcpReference {
    c: f64,
    r: f64,
    bits: f64,
    weighted_rtt: f64,
    elapsed: f64,
}

impl Law for RcpReference {
    fn interval(&mut self, _n: u64, flows: &[(f64, f64)], _y: f64, q: f64) -> f64 {
        for &(bits, rtt) in flows {
            self.bits += bits;
            self.weighted_rtt += bits * rtt;
        }
        self.elapsed += T;
        let d = if self.bits > 0.0 { self.weighted_rtt / self.bits } else { 0.2 };
        let tr = d.min(0.01);
        if self.elapsed + 1e-12 >= tr {
            let y = self.bits / self.elapsed;
            let next = self.r * (1.0 + (tr / d) * (0.4 * (self.c - y) - q / d) / self.c);
            self.r = next.clamp(0.01 * 8000.0 / d, self.c);
            self.bits = 0.0;
            self.weighted_rtt = 0.0;
            self.elapsed = 0.0;
        }
        self.r
    }
}

/// What a run measured.
#[derive(Debug)]
struct Trace {
    /// Input rate per interval (bit/s).
    y: Vec<f64>,
    /// Peak queue (bits).
    peak_queue: f64,
}

/// Runs `law` on a link of `c` bit/s with flows of the given RTTs (s) starting at the given
/// times (s); the first advertised rate is `r0`. A flow starts one RTT after its start (the
/// probe's round trip) at the rate the link advertised then.
fn run(law: &mut dyn Law, c: f64, r0: f64, rtts: &[f64], starts: &[f64], seconds: f64) -> Trace {
    let steps = (seconds / T) as usize;
    let mut advertised = vec![r0; steps + 1];
    let mut queue = 0.0f64;
    let mut trace = Trace { y: Vec::with_capacity(steps), peak_queue: 0.0 };
    for n in 1..=steps {
        let t = n as f64 * T;
        let flows: Vec<(f64, f64)> = rtts
            .iter()
            .zip(starts)
            .filter(|&(&rtt, &start)| t >= start + rtt)
            .map(|(&rtt, _)| {
                let d = ((rtt / T).round() as usize).max(1);
                (advertised[n.saturating_sub(d)] * T, rtt)
            })
            .collect();
        let y = flows.iter().map(|f| f.0).sum::<f64>() / T;
        queue = (queue + (y - c) * T).max(0.0);
        trace.peak_queue = trace.peak_queue.max(queue);
        trace.y.push(y);
        advertised[n] = law.interval(n as u64, &flows, y, queue);
    }
    trace
}

fn piqi(c: f64, kappa: PiqiRcpKappa) -> (Piqi, f64) {
    let cfg = PiqiRcpRouterConfig { kappa, ..PiqiRcpRouterConfig::default() };
    let r = PiqiRcpRouter::new(cfg, c as u64, Time::ZERO);
    let r0 = r.rate_bps();
    (Piqi(r), r0)
}

/// Largest minus smallest input over the last `seconds`, relative to C.
fn swing(tr: &Trace, c: f64, seconds: f64) -> f64 {
    let tail = &tr.y[tr.y.len() - (seconds / T) as usize..];
    let (lo, hi) = tail.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &y| (lo.min(y), hi.max(y)));
    (hi - lo) / c
}

/// Heterogeneous delay, one link of 1 Gb/s, RTTs of 200 ms and 5 ms mixed (1 long + 9 short,
/// and 9 long + 1 short). With kappa = kappa* of the largest RTT (T / (2 (T + 0.2)) = 0.0122,
/// "auto") the input settles at gamma C in both mixes: over the last 5 s of 30 it moves by less
/// than 0.1 % of C and its mean is within 0.5 % of gamma C. The bound is sufficient, not
/// necessary, but not loose by much: four times kappa* keeps the long-RTT mix swinging by more
/// than half of C.
#[test]
fn stable_under_heterogeneous_delay_within_the_kappa_bound() {
    let c = 1e9;
    let kappa_star = T / (2.0 * (T + 0.2));
    for long in [1usize, 9] {
        let mut rtts = vec![0.2; long];
        rtts.extend(vec![0.005; 10 - long]);
        let starts = [0.0; 10];
        let (mut law, r0) = piqi(c, PiqiRcpKappa::Auto);
        let tr = run(&mut law, c, r0, &rtts, &starts, 30.0);
        assert!((law.0.kappa() - kappa_star).abs() < 1e-9, "kappa {}", law.0.kappa());
        assert!(swing(&tr, c, 5.0) < 0.001, "{long} long: swing {}", swing(&tr, c, 5.0));
        let tail = &tr.y[tr.y.len() - 1000..];
        let mean = tail.iter().sum::<f64>() / tail.len() as f64;
        assert!((mean / (0.98 * c) - 1.0).abs() < 0.005, "{long} long: mean {mean}");
    }
    let mut rtts = vec![0.2; 9];
    rtts.push(0.005);
    let (mut fast, r0) = piqi(c, PiqiRcpKappa::Fixed(4.0 * kappa_star));
    let tr = run(&mut fast, c, r0, &rtts, &[0.0; 10], 30.0);
    assert!(swing(&tr, c, 5.0) > 0.5, "4 kappa* did not oscillate: swing {}", swing(&tr, c, 5.0));
}

/// Seed 002's surge (1 Gb/s, RTT 50 ms; one flow, then ten more join at once at t = 5 s),
/// PIQI-RCP against the RCP reference. What the reconstruction shows:
/// - RCP's queue term, once the joiners made a queue, drives R to its floor: the input falls
///   below 5 % of C for a while after the queue drained (the on-off behaviour of protocols.md
///   3.7.3). PIQI-RCP never does: from 0.5 s after the join on, its input stays within 3 % of
///   gamma C and settles at gamma C (no undershoot, no second overshoot).
/// - Both overshoot at the join itself (every joiner starts at the advertised rate, about C), and
///   PIQI-RCP, whose decrease per interval is bounded by kappa R, queues *more* than RCP in this
///   model (1 to 3 times RCP's peak): the papers' "significantly lower buffering" is not
///   reproduced by this reconstruction (docs/algorithms/piqi-rcp.md).
#[test]
fn surge_no_collapse_unlike_rcp_but_more_queue() {
    let c = 1e9;
    let rtts = [0.05; 11];
    let mut starts = [5.0; 11];
    starts[0] = 0.0;
    let (mut p, r0) = piqi(c, PiqiRcpKappa::Auto);
    let tp = run(&mut p, c, r0, &rtts, &starts, 15.0);
    let mut rcp = RcpReference { c, r: 0.05 * c, bits: 0.0, weighted_rtt: 0.0, elapsed: 0.0 };
    let tr = run(&mut rcp, c, 0.05 * c, &rtts, &starts, 15.0);

    let after = |tr: &Trace, from: f64| tr.y[(from / T) as usize..].to_vec();
    let rcp_min = after(&tr, 5.5).into_iter().fold(f64::MAX, f64::min);
    assert!(rcp_min < 0.05 * c, "RCP's input stayed above {rcp_min}");
    for (k, y) in after(&tp, 5.5).into_iter().enumerate() {
        assert!((y / (0.98 * c) - 1.0).abs() < 0.03, "PIQI input {y} at {:.3} s", 5.5 + k as f64 * T);
    }
    assert!((tp.y.last().unwrap() / (0.98 * c) - 1.0).abs() < 1e-3);
    let ratio = tp.peak_queue / tr.peak_queue;
    assert!((1.0..3.0).contains(&ratio), "peak queues: PIQI {} RCP {} bits", tp.peak_queue, tr.peak_queue);
}
