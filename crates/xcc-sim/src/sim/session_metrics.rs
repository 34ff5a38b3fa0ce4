//! Seed 004's error metrics at packet level, for `[sessions]` runs with a `sample_interval`.
//!
//! At each sample time `t` (every `sample_interval`, as the session driver samples) the rates
//! are *measured from delivered packets* over the window `[t - W, t]` (`rate_window`), and
//! compared with the max-min oracle's exact rates for the sessions present at `t`:
//!
//! - **E_s** (per source): `(d / share - x*) / x*` in %, where `d` is the session's data
//!   delivered over the window (bit/s), `share` the data share of its rate (the rest is the
//!   control budget) and `x*` its max-min rate; over the sessions present for the whole window
//!   whose source has a rate (seed 004: "only for sessions with a computed rate"). `d` is the
//!   data delivered in the window over the time from the last delivery before the window to
//!   the last one in it: exact for a paced stream, where bytes over the window's length would
//!   be off by up to one packet per window (+-6 % for a 2.5 Mb/s session's 8 packets in
//!   50 ms). A session with no delivery before the window is measured over the window.
//! - **E_e** (per link): `(c - C) / C` in %, `c` the link's bits sent over the window (data and
//!   control), over the links that bottleneck at least one session in the oracle's allocation.
//!   A link sends at most `C`, so this E_e cannot show an overshoot; **offered E_e**
//!   (`ee_in_*`) takes `c` as the bits *arriving* at the link over the window instead, which
//!   exceeds `C` where the sessions crossing it are sent faster than it drains (the excess is
//!   what builds its queue): the overshoot the session driver computes from assigned rates,
//!   here after the upstream queues have shaped the data.
//! - **Assigned E_s and E_e** (`es_asg_*`, `ee_asg_*`): seed 004's own definitions, on the
//!   rates the protocol *assigns* at the sample (Section IV: "λs(t) the rate assigned to
//!   session s at time t"; E_e of "the rates assigned to the sessions that cross a link"), over
//!   every present session with a rate, as the session driver computes them. The delivered
//!   E_s above is a second definition (what the data achieved), shown apart.
//! - **Maximum queue** of any link since the previous sample (bytes, and in seconds of
//!   transmission), the `max_queue_bytes` of the links table kept whole-run.
//!
//! The oracle runs only when the set of present sessions changed. Its capacities are the
//! links' rates; its paths are the sessions' routes.

use super::{Endpoints, Event, Simulation};
use crate::engine::EventQueue;
use crate::output::{Table, TableBuilder};
use crate::stats::mean_p10_p90;
use xcc_core::analysis::maxmin::{max_min_fair, Allocation, Bottleneck, MaxMinProblem};
use xcc_core::{Dur, Time};

/// The sampler's state: the window's starting counters and the oracle's last answer.
pub(super) struct SessionSampler {
    interval: Dur,
    window: Dur,
    /// Per flow, delivered bytes at the window's start (`u64::MAX`: not present then), and the
    /// time of the last delivery before it (`Time::NEVER`: none).
    delivered_then: Vec<u64>,
    delivery_then: Vec<Time>,
    /// Per link, bytes sent at the window's start.
    sent_then: Vec<u64>,
    /// Per link, bytes arrived at the window's start.
    arrived_then: Vec<u64>,
    /// Per link, its largest queue before the current sample period (the links table's
    /// whole-run maximum is restored from it at the end).
    max_before: Vec<u64>,
    oracle: Option<(Vec<u32>, Allocation)>,
    pub samples: TableBuilder,
    pub rates: TableBuilder,
}

impl SessionSampler {
    /// A sampler every `interval` over `window`, scheduling its events up to `end`.
    pub fn new(interval: Dur, window: Dur, end: Time, sizes: (usize, usize), queue: &mut EventQueue) -> Self {
        let (flows, links) = sizes;
        let mut t = Time::ZERO + interval;
        while t <= end {
            queue.schedule(Time(t.as_ns() - window.as_ns()), Event::SessionWindow);
            queue.schedule(t, Event::SessionSample);
            t += interval;
        }
        SessionSampler {
            interval,
            window,
            delivered_then: vec![u64::MAX; flows],
            delivery_then: vec![Time::NEVER; flows],
            sent_then: vec![0; links],
            arrived_then: vec![0; links],
            max_before: vec![0; links],
            oracle: None,
            samples: TableBuilder::for_table("session_samples"),
            rates: TableBuilder::for_table("session_rates"),
        }
    }

    /// The two tables: one row per sample, and the last sample's per-session rates.
    pub fn finish(self) -> (Table, Table) {
        (self.samples.finish(), self.rates.finish())
    }
}

/// When a session's last data packet was delivered (`Time::NEVER`: none, or not a session).
fn last_delivery(rec: &super::FlowRec) -> Time {
    match rec.ep {
        Endpoints::Session { last_delivery, .. } => last_delivery,
        _ => Time::NEVER,
    }
}

impl Simulation {
    /// A session that has joined and not left (nor sent all its data).
    fn session_present(&self, f: usize) -> bool {
        let rec = &self.flows[f];
        rec.session.is_some() && matches!(rec.ep, Endpoints::Session { sending: true, .. })
    }

    /// The window before a sample opens: every present session's delivered bytes, every link's
    /// sent bytes.
    pub(super) fn session_window(&mut self) {
        let now = self.now;
        let present: Vec<bool> = (0..self.flows.len()).map(|f| self.session_present(f)).collect();
        let Some(s) = self.sampler.as_mut() else { return };
        for (f, rec) in self.flows.iter().enumerate() {
            s.delivered_then[f] = if present[f] { rec.delivered } else { u64::MAX };
            s.delivery_then[f] = last_delivery(rec);
        }
        for (l, link) in self.links.iter_mut().enumerate() {
            link.advance(now, &mut self.arena[..]);
            s.sent_then[l] = link.stats.bytes_out;
            s.arrived_then[l] = link.stats.bytes_in;
        }
    }

    /// A sample: E_s, E_e and the largest queue, against the oracle at this time.
    pub(super) fn session_sample(&mut self) {
        let now = self.now;
        let present: Vec<u32> = (0..self.flows.len() as u32).filter(|&f| self.session_present(f as usize)).collect();
        let Some(mut s) = self.sampler.take() else { return };
        if s.oracle.as_ref().is_none_or(|(p, _)| *p != present) {
            let problem = MaxMinProblem {
                capacity: self.links.iter().map(|l| l.rate_bps as f64).collect(),
                paths: present
                    .iter()
                    .map(|&f| {
                        let r = self.flows[f as usize].fwd;
                        (0..r.len).map(|k| self.routes.hop(r, k)).collect()
                    })
                    .collect(),
                demand: present
                    .iter()
                    .map(|&f| self.flows[f as usize].session.map_or(f64::INFINITY, |x| x.demand))
                    .collect(),
            };
            let alloc = max_min_fair(&problem).expect("valid max-min problem");
            s.oracle = Some((present, alloc));
        }
        let (present, alloc) = s.oracle.as_ref().expect("just computed");
        let secs = s.window.as_secs_f64();
        let last_sample = now + s.interval > self.end;
        let mut es = Vec::with_capacity(present.len());
        // Seed 004's own definitions, on the rates *assigned* at the sample (as the session
        // driver computes them): E_s over every present session with a rate, E_e of the sum
        // of the assigned rates crossing each bottleneck.
        let mut es_asg = Vec::with_capacity(present.len());
        let mut load = vec![0.0f64; self.links.len()];
        for (i, &f) in present.iter().enumerate() {
            let rec = &self.flows[f as usize];
            let spec = rec.session.expect("session flow");
            let Some(r) = self.groups[spec.group as usize].rate(spec.local) else { continue };
            let exact = alloc.rate[i];
            if exact > 0.0 && exact.is_finite() {
                es_asg.push((r - exact) / exact * 100.0);
            }
            for k in 0..rec.fwd.len {
                load[self.routes.hop(rec.fwd, k) as usize] += r;
            }
        }
        for (i, &f) in present.iter().enumerate() {
            let rec = &self.flows[f as usize];
            let spec = rec.session.expect("session flow");
            let then = s.delivered_then[f as usize];
            let group = &self.groups[spec.group as usize];
            if then == u64::MAX || group.rate(spec.local).is_none() {
                continue;
            }
            let exact = alloc.rate[i];
            let (before, latest) = (s.delivery_then[f as usize], last_delivery(rec));
            let span = if before != Time::NEVER && latest != Time::NEVER && latest > before {
                (latest - before).as_secs_f64()
            } else {
                secs
            };
            let rate = (rec.delivered - then) as f64 * 8.0 / span / group.data_share();
            if exact > 0.0 && exact.is_finite() {
                let e = (rate - exact) / exact * 100.0;
                es.push(e);
                if last_sample {
                    s.rates
                        .f64("time_s", now.as_secs_f64())
                        .i64("flow_id", f as i64)
                        .f64("rate_bps", rate)
                        .f64("maxmin_bps", exact)
                        .f64("error_pct", e);
                }
            }
        }
        let mut is_bottleneck = vec![false; self.links.len()];
        for b in &alloc.bottleneck {
            if let Bottleneck::Link(l) = b {
                is_bottleneck[*l as usize] = true;
            }
        }
        let (mut ee, mut ee_in, mut ee_asg, mut qmax, mut dmax) = (Vec::new(), Vec::new(), Vec::new(), 0u64, 0.0f64);
        for (l, link) in self.links.iter_mut().enumerate() {
            link.advance(now, &mut self.arena[..]);
            let cap = link.rate_bps as f64;
            if is_bottleneck[l] {
                let sent = (link.stats.bytes_out - s.sent_then[l]) as f64 * 8.0 / secs;
                ee.push((sent - cap) / cap * 100.0);
                let arrived = (link.stats.bytes_in - s.arrived_then[l]) as f64 * 8.0 / secs;
                ee_in.push((arrived - cap) / cap * 100.0);
                ee_asg.push((load[l] - cap) / cap * 100.0);
            }
            // The largest queue of this period; the link's own maximum restarts from now.
            let m = link.stats.max_queue_bytes;
            qmax = qmax.max(m);
            dmax = dmax.max(m as f64 * 8.0 / cap);
            s.max_before[l] = s.max_before[l].max(m);
            link.stats.max_queue_bytes = link.waiting_bytes();
        }
        let es_max_abs = es.iter().fold(f64::NAN, |a: f64, &e| if a.is_nan() { e.abs() } else { a.max(e.abs()) });
        let t = &mut s.samples;
        t.f64("time_s", now.as_secs_f64()).i64("present", present.len() as i64).i64("rated", es.len() as i64);
        let (m, p10, p90) = mean_p10_p90(&mut es);
        t.f64("es_mean", m).f64("es_p10", p10).f64("es_p90", p90).f64("es_max_abs", es_max_abs);
        t.i64("bottlenecks", ee.len() as i64);
        let (m, p10, p90) = mean_p10_p90(&mut ee);
        t.f64("ee_mean", m).f64("ee_p10", p10).f64("ee_p90", p90).f64("ee_max", ee.last().copied().unwrap_or(f64::NAN));
        let (m, p10, p90) = mean_p10_p90(&mut ee_in);
        let ee_in_max = ee_in.last().copied().unwrap_or(f64::NAN);
        t.f64("ee_in_mean", m).f64("ee_in_p10", p10).f64("ee_in_p90", p90).f64("ee_in_max", ee_in_max);
        let (m, p10, p90) = mean_p10_p90(&mut es_asg);
        t.f64("es_asg_mean", m).f64("es_asg_p10", p10).f64("es_asg_p90", p90);
        let (m, p10, p90) = mean_p10_p90(&mut ee_asg);
        let ee_asg_max = ee_asg.last().copied().unwrap_or(f64::NAN);
        t.f64("ee_asg_mean", m).f64("ee_asg_p10", p10).f64("ee_asg_p90", p90).f64("ee_asg_max", ee_asg_max);
        t.i64("max_queue_bytes", qmax as i64).f64("max_queue_delay_s", dmax);
        self.sampler = Some(s);
    }

    /// Ends sampling: the links' whole-run maximum queues again, and the two tables.
    pub(super) fn finish_session_sampler(&mut self) -> (Table, Table) {
        let Some(s) = self.sampler.take() else { return (Table::default(), Table::default()) };
        for (l, link) in self.links.iter_mut().enumerate() {
            link.stats.max_queue_bytes = link.stats.max_queue_bytes.max(s.max_before[l]);
        }
        s.finish()
    }
}
