//! The datacenter papers' metrics of a run with a `[workload]` (HPCC, PowerTCP): each workload
//! flow's FCT against its ideal FCT on an empty network (the slowdown), the slowdown by
//! flow-size bin at p50 / p95 / p99 ([`xcc_core::workload::slowdown`]), and the queue-length
//! CDF of every switch port.
//!
//! - **Slowdown**, in the HPCC paper's words (section 5, as we recall them: the paper's text
//!   was not at hand to check), "a flow's actual FCT normalized by its ideal FCT when the
//!   network only has this flow". The ideal FCT here is the authors' code's, which is exact.
//! - **FCT** is the time from the flow's start to the sender's last acknowledged byte, as the
//!   HPCC artifact measures it (`RdmaHw::QpComplete`, called when the sender's queue pair has
//!   every byte acknowledged, logs the FCT). The ideal FCT is the artifact's formula over the
//!   flow's own route (`ideal_fct`: base RTT plus the wire bytes at the bottleneck rate). A
//!   flow that did not finish by the end has no FCT and no slowdown (null), and is left out of
//!   the bins.
//! - **Queue-length CDF**: the queue (bytes waiting, transmission not started) that each
//!   packet finds when it arrives at a switch port (a link leaving a router), in 1 KB buckets,
//!   as a cumulative fraction of the packets that arrived there. The HPCC artifact samples
//!   its switch queues periodically instead (time averages); an arrival's view weighs busy
//!   periods by their packets, so the two differ where the load is bursty.

use xcc_build::workload::GeneratedWorkload;
use xcc_core::link::model::PacketStore;
use xcc_core::workload::slowdown::slowdown;
use xcc_core::workload::{ideal_fct, slowdown_by_size, PathHop};
use xcc_core::{Dur, Time};

use super::{Endpoints, Simulation};
use crate::link::{SimLink, Slot};
use crate::output::{DatacenterTables, TableBuilder};
use crate::scenario::model::{NodeKind, Scenario};

/// Width of a queue-length bucket, bytes.
pub(super) const QUEUE_BUCKET_BYTES: u64 = 1000;

/// What a run with a workload keeps beside the usual counters.
pub(super) struct DatacenterMetrics {
    workload: GeneratedWorkload,
    /// Per link: whether it leaves a switch.
    switch_port: Vec<bool>,
    /// Per link: packets that found a queue of `[k, k+1)` buckets, by k (switch ports only).
    queue_seen: Vec<Vec<u64>>,
}

impl DatacenterMetrics {
    pub(super) fn new(workload: GeneratedWorkload, scenario: &Scenario) -> DatacenterMetrics {
        let switch_port: Vec<bool> =
            scenario.links.iter().map(|l| scenario.nodes[l.from as usize].kind == NodeKind::Router).collect();
        DatacenterMetrics { workload, queue_seen: vec![Vec::new(); switch_port.len()], switch_port }
    }

    /// Counts the queue that a packet arriving at link `l` now finds.
    #[inline]
    pub(super) fn record_queue<S: PacketStore<Slot> + ?Sized>(
        &mut self,
        l: u32,
        link: &mut SimLink,
        now: Time,
        store: &mut S,
    ) {
        if !self.switch_port[l as usize] {
            return;
        }
        // Transmissions that started before now leave the queue first (the link is lazy).
        link.advance(now, store);
        let bucket = (link.waiting_bytes() / QUEUE_BUCKET_BYTES) as usize;
        let h = &mut self.queue_seen[l as usize];
        if h.len() <= bucket {
            h.resize(bucket + 1, 0);
        }
        h[bucket] += 1;
    }
}

impl Simulation {
    /// The `fct`, `slowdown` and `queue_cdf` tables, if the run has a workload.
    pub(super) fn datacenter_tables(&mut self) -> Option<DatacenterTables> {
        let d = self.datacenter.take()?;
        let end = self.end;
        let name = |n: u32| self.scenario.nodes[n as usize].name.as_str();
        let mut fct = TableBuilder::for_table("fct");
        let mut done: Vec<(u64, f64)> = Vec::new();
        for f in d.workload.flows() {
            let rec = &self.flows[f];
            let completed = match &rec.ep {
                Endpoints::Bulk(ends) => ends.sender.stats_at(end).completed_at,
                Endpoints::Done(stats) => stats.0.completed_at,
                _ => None,
            };
            let size = rec.size.expect("a workload flow has a size");
            let t = rec.transport.expect("a workload flow is a bulk flow");
            let path: Vec<PathHop> = (0..rec.fwd.len)
                .map(|k| {
                    let link = &self.scenario.links[self.routes.hop(rec.fwd, k) as usize];
                    PathHop { rate_bps: link.rate_bps, delay: Dur(link.delay_ns) }
                })
                .collect();
            let ideal =
                ideal_fct(size, &path, t.mss_bytes, t.header_bytes).expect("a route has links of positive rate");
            let took = completed.map(|c| c - rec.start);
            let slow = took.map(|x| slowdown(x, ideal));
            if let Some(s) = slow {
                done.push((size, s));
            }
            let kind = if d.workload.incast.contains(&f) { "incast" } else { "background" };
            fct.i64("flow_id", f as i64)
                .str("kind", kind)
                .str("src", name(rec.src))
                .str("dst", name(rec.dst))
                .i64("size_bytes", size as i64)
                .f64("start_s", rec.start.as_secs_f64())
                .f64("fct_s", took.map_or(f64::NAN, |x| x.as_secs_f64()))
                .f64("ideal_fct_s", ideal.as_secs_f64())
                .f64("slowdown", slow.unwrap_or(f64::NAN));
        }
        let mut bins = TableBuilder::for_table("slowdown");
        for (k, b) in slowdown_by_size(&done, d.workload.bin_percent).expect("bin width checked").iter().enumerate() {
            bins.i64("bin", k as i64)
                .i64("max_size_bytes", b.max_size_bytes as i64)
                .i64("flows", b.flows as i64)
                .f64("p50", b.p50)
                .f64("p95", b.p95)
                .f64("p99", b.p99);
        }
        let mut cdf = TableBuilder::for_table("queue_cdf");
        for (l, h) in d.queue_seen.iter().enumerate() {
            let total: u64 = h.iter().sum();
            let mut below = 0;
            for (k, &n) in h.iter().enumerate() {
                below += n;
                cdf.i64("link_id", l as i64)
                    .str("link", &self.scenario.links[l].name)
                    .i64("below_bytes", (k as u64 + 1) as i64 * QUEUE_BUCKET_BYTES as i64)
                    .i64("packets", n as i64)
                    .f64("fraction", below as f64 / total as f64);
            }
        }
        Some(DatacenterTables { fct: fct.finish(), slowdown: bins.finish(), queue_cdf: cdf.finish() })
    }
}
