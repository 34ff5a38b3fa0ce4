//! One domain of the parallel engine (`parallel.rs`): a [`Simulation`] that runs only the
//! events of its own nodes and links, hands the packets that leave it over a cut link to the
//! far end's domain at window boundaries, and takes in the packets sent to it.
//!
//! A cut link stays whole in the domain of the node it leaves: its queue, transmitter and pipe
//! run there, and its delivery event still pops the pipe there (counters, invariants). At each
//! window's end `E` the domain reports the link's departures up to `E` (`advance`: the lazy
//! reporting every other touch of the link does first, so no call changes order) and sends
//! every packet whose transmission has started, with its arrival time at the far end: a packet
//! delivered before `E + lookahead` started before `E`, so nothing arrives late. From there on
//! the packet is never changed (only waiting packets are marked). The receiving domain puts it
//! in its inbox and schedules its arrival; what happens at the far end is exactly what the
//! serial engine does after a delivery (`Simulation::forward`).
//!
//! Flow state is split by end: the source's domain runs the sender (and a session's source
//! task), the destination's domain the receiver; each domain holds a full copy of the tables
//! and the end of the run merges them ([`merge`]).

use std::any::Any;
use std::sync::Arc;

use super::{BulkEnds, Endpoints, Event, RunError, RunOutput, RunStats, Simulation};
use crate::link::{SimPacket, Slot};
use crate::partition::Partition;
use xcc_core::link::LinkAlgorithm as _;
use xcc_core::Time;

/// A domain's part of the parallel engine's state.
pub(crate) struct DomainState {
    pub id: u32,
    pub part: Arc<Partition>,
    /// Per link: packets at the front of its pipe already sent to the far end's domain.
    shipped: Vec<u32>,
    /// The cut links this domain owns, in index order.
    cut_owned: Vec<u32>,
    inbox: Vec<Option<Shipment>>,
    inbox_free: Vec<u32>,
    samples: Vec<DomainSample>,
}

/// A packet crossing to another domain.
pub(crate) struct Shipment {
    /// When it reaches the far end of its link.
    pub at: Time,
    /// The far end's domain.
    pub to: u32,
    slot: Slot,
    sp: SimPacket,
    /// A control packet's body, out of its session group.
    body: Option<Box<dyn Any + Send>>,
}

/// One `Sample` of a domain: the rows of what it holds.
struct DomainSample {
    time_s: f64,
    /// Flows whose source is here and that have started and not finished.
    senders: Vec<SenderRow>,
    /// Flows whose destination is here: (flow, rate over the interval, delivered bytes).
    receivers: Vec<(u32, f64, u64)>,
    links: Vec<LinkRow>,
}

struct SenderRow {
    flow: u32,
    cwnd: i64,
    ssthresh: i64,
    srtt: f64,
    inflight: i64,
    pacing: f64,
    state: &'static str,
    gain: f64,
}

struct LinkRow {
    link: u32,
    rate: f64,
    utilisation: f64,
    queue_bytes: i64,
    queue_packets: i64,
    drops: i64,
    marks: i64,
    gauge: f64,
}

impl DomainState {
    pub fn new(part: Arc<Partition>, id: u32) -> DomainState {
        let cut_owned =
            (0..part.cut.len() as u32).filter(|&l| part.cut[l as usize] && part.link_owner[l as usize] == id).collect();
        DomainState {
            id,
            shipped: vec![0; part.cut.len()],
            cut_owned,
            part,
            inbox: Vec::new(),
            inbox_free: Vec::new(),
            samples: Vec::new(),
        }
    }
}

impl Simulation {
    /// Whether flow `f`'s source is here (always, in the serial engine).
    #[inline]
    pub(super) fn sends(&self, f: u32) -> bool {
        match &self.dom {
            None => true,
            Some(d) => d.part.node_domain[self.flows[f as usize].src as usize] == d.id,
        }
    }

    /// Link `l` just delivered `slot`: if the link is cut, the packet was sent to the far
    /// end's domain at a window boundary; only its slot here is freed.
    #[inline]
    pub(super) fn shipped_off(&mut self, l: u32, slot: Slot) -> bool {
        let d = self.dom.as_mut().expect("a domain");
        if !d.part.cut[l as usize] {
            return false;
        }
        debug_assert!(d.shipped[l as usize] > 0, "a cut link delivered a packet it did not send on");
        d.shipped[l as usize] -= 1;
        self.free.push(slot.idx);
        true
    }

    /// An event that every domain (or both ends' domains) runs, such as a sample, counts once,
    /// as in the serial engine: the copies (`copy`) are taken off the count.
    #[inline]
    pub(super) fn uncount_copy(&mut self, copy: bool) {
        if copy {
            self.events -= 1;
        }
    }

    /// Runs every event due at or before `upto`.
    pub(crate) fn run_window(&mut self, upto: Time) {
        let upto = upto.min(self.end);
        while let Some((t, ev)) = self.queue.pop_due(upto) {
            self.dispatch(t, ev);
        }
    }

    /// At the end `end` of a window (every event before it has run): the packets whose
    /// transmission on a cut link has started and that were not sent yet, in link order.
    pub(crate) fn ship(&mut self, end: Time, lookahead: xcc_core::Dur) -> Vec<Shipment> {
        let last = Time(end.as_ns() - 1);
        let d = self.dom.as_mut().expect("a domain");
        let mut out = Vec::new();
        for &l in &d.cut_owned {
            let link = &mut self.links[l as usize];
            link.advance(last, &mut self.arena[..]);
            let to = d.part.node_domain[self.scenario.links[l as usize].to as usize];
            let delay = link.delay;
            let skip = d.shipped[l as usize] as usize;
            for e in link.pipe().skip(skip).take_while(|e| e.start <= last) {
                let at = e.end + delay + xcc_core::Dur(e.jitter_ns as u64);
                assert!(
                    at.as_ns() >= end.as_ns() && at.as_ns() >= e.start.as_ns() + lookahead.as_ns(),
                    "a packet on cut link {l} arrives inside the window it left in"
                );
                out.push(Shipment { at, to, slot: e.item, sp: self.arena[e.item.idx as usize], body: None });
                d.shipped[l as usize] += 1;
            }
        }
        // Control packets take their bodies with them; the copy left on the link is inert.
        for s in out.iter_mut().filter(|s| s.sp.ctrl != 0) {
            let g = self.flows[s.sp.pkt.flow.0 as usize].session.expect("session flow").group;
            s.body = Some(self.groups[g as usize].export(s.sp.ctrl - 1));
            self.arena[s.slot.idx as usize].ctrl = 0;
        }
        out
    }

    /// Takes in the packets other domains sent here, in the order given (the caller's
    /// deterministic order): each gets its arrival event.
    pub(crate) fn receive(&mut self, shipments: impl IntoIterator<Item = Shipment>) {
        let d = self.dom.as_mut().expect("a domain");
        for s in shipments {
            debug_assert_eq!(s.to, d.id);
            let at = s.at;
            let k = match d.inbox_free.pop() {
                Some(k) => {
                    d.inbox[k as usize] = Some(s);
                    k
                }
                None => {
                    d.inbox.push(Some(s));
                    (d.inbox.len() - 1) as u32
                }
            };
            self.queue.schedule(at, Event::Arrive(k));
        }
    }

    /// Inbox packet `k` reaches the far end of its link: on as after any delivery. Not counted
    /// as an event: the hop's delivery in the sending domain was.
    pub(super) fn arrive(&mut self, k: u32) {
        self.events -= 1;
        let d = self.dom.as_mut().expect("a domain");
        let s = d.inbox[k as usize].take().expect("a packet in the inbox");
        d.inbox_free.push(k);
        let mut sp = s.sp;
        if let Some(body) = s.body {
            let g = self.flows[sp.pkt.flow.0 as usize].session.expect("session flow").group;
            sp.ctrl = self.groups[g as usize].import(body) + 1;
        }
        let mut slot = s.slot;
        slot.idx = self.alloc(sp);
        self.forward(slot);
    }

    /// A metrics sample of what this domain holds (merged in flow and link order at the end).
    pub(super) fn sample_domain(&mut self) {
        let now = self.now;
        let dt = self.interval.as_secs_f64();
        let d = self.dom.as_ref().expect("a domain");
        let (id, part) = (d.id, d.part.clone());
        self.uncount_copy(id != 0);
        let mut sample =
            DomainSample { time_s: now.as_secs_f64(), senders: Vec::new(), receivers: Vec::new(), links: Vec::new() };
        for (i, rec) in self.flows.iter_mut().enumerate() {
            if part.node_domain[rec.dst as usize] == id {
                // Updated at every sample, emitted or not: equal to the serial engine's rate on
                // every row it emits (a flow is emitted from its start to its end, without gaps).
                let rate = (rec.delivered - rec.delivered_at_sample) as f64 * 8.0 / dt;
                rec.delivered_at_sample = rec.delivered;
                sample.receivers.push((i as u32, rate, rec.delivered));
            }
            if part.node_domain[rec.src as usize] != id {
                continue;
            }
            let (cwnd, ssthresh, srtt, inflight) = match &rec.ep {
                Endpoints::Bulk(ends) => {
                    let s = ends.sender.stats();
                    (
                        s.cwnd_bytes as i64,
                        s.ssthresh_bytes.min(i64::MAX as u64) as i64,
                        s.srtt.as_secs_f64(),
                        s.bytes_in_flight as i64,
                    )
                }
                Endpoints::Cbr { .. } | Endpoints::Session { .. } => (-1, -1, f64::NAN, -1),
                _ => continue,
            };
            let (pacing, state, gain) = match &rec.ep {
                Endpoints::Bulk(ends) => {
                    use xcc_core::host::Controller as _;
                    let c = ends.sender.controller();
                    (c.pacing_rate_bps(), c.state_label(), c.current_pacing_gain())
                }
                _ => (None, None, None),
            };
            sample.senders.push(SenderRow {
                flow: i as u32,
                cwnd,
                ssthresh,
                srtt,
                inflight,
                pacing: pacing.unwrap_or(f64::NAN),
                state: state.unwrap_or(""),
                gain: gain.unwrap_or(f64::NAN),
            });
        }
        for (i, link) in self.links.iter_mut().enumerate() {
            if part.link_owner[i] != id {
                continue;
            }
            link.advance(now, &mut self.arena[..]);
            let (last_out, last_drops, last_marks) = self.link_last[i];
            let s = &link.stats;
            let rate = (s.bytes_out - last_out) as f64 * 8.0 / dt;
            let drops = s.drops + s.losses;
            sample.links.push(LinkRow {
                link: i as u32,
                rate,
                utilisation: rate / link.rate_bps as f64,
                queue_bytes: link.waiting_bytes() as i64,
                queue_packets: link.waiting_packets() as i64,
                drops: (drops - last_drops) as i64,
                marks: (s.marks - last_marks) as i64,
                gauge: link.algo.gauge(),
            });
            self.link_last[i] = (s.bytes_out, drops, s.marks);
        }
        self.dom.as_mut().expect("a domain").samples.push(sample);
        let next = now + self.interval;
        if next <= self.end {
            self.queue.schedule(next, Event::Sample);
        }
    }

    /// The end of the run in this domain: its links settled, its own packets and session
    /// bodies checked (the merged run checks what spans domains).
    pub(crate) fn finish_domain(&mut self) -> Result<(), RunError> {
        self.now = self.end;
        let id = self.dom.as_ref().expect("a domain").id;
        let mut in_pipe = 0u64;
        for (l, link) in self.links.iter_mut().enumerate() {
            let owner = self.dom.as_ref().expect("a domain").part.link_owner[l];
            if owner != id {
                if link.pipe_len() != 0 {
                    return Err(RunError::Invariant(format!("domain {id}: packets on link {l} of domain {owner}")));
                }
                continue;
            }
            link.settle(self.end, &mut self.arena[..]);
            in_pipe += link.pipe_len() as u64;
        }
        let live = self.arena.len() as u64 - self.free.len() as u64;
        if live != in_pipe {
            return Err(RunError::Invariant(format!(
                "domain {id}: {live} packets are allocated but {in_pipe} are on its links"
            )));
        }
        self.check_sessions().map_err(|m| RunError::Invariant(format!("domain {id}: {m}")))
    }
}

/// The finished domains as one run: each link from its owner, each flow's sender from its
/// source's domain and receiver from its destination's, counters summed, samples in the serial
/// engine's row order; then the end-of-run invariants over the whole network.
pub(crate) fn merge(mut domains: Vec<Simulation>, wall_seconds: f64) -> Result<RunOutput, RunError> {
    let part = domains[0].dom.as_ref().expect("a domain").part.clone();
    let mut links: Vec<_> = domains.iter_mut().map(|d| std::mem::take(&mut d.links)).collect();
    let mut flows: Vec<_> = domains.iter_mut().map(|d| std::mem::take(&mut d.flows)).collect();
    let samples: Vec<_> =
        domains.iter_mut().map(|d| std::mem::take(&mut d.dom.as_mut().expect("a domain").samples)).collect();
    let mut sums = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    for d in &domains {
        sums.0 += d.sent.0;
        sums.1 += d.sent.1;
        sums.2 += d.received.0;
        sums.3 += d.received.1;
        sums.4 += d.absorbed.0;
        sums.5 += d.absorbed.1;
        sums.6 += d.events;
        sums.7 += d.packet_hops;
    }
    let mut m = domains.swap_remove(0);
    m.sent = (sums.0, sums.1);
    m.received = (sums.2, sums.3);
    m.absorbed = (sums.4, sums.5);
    m.events = sums.6;
    m.packet_hops = sums.7;
    // Links: each from the domain that owns it.
    let n_links = links[0].len();
    let mut merged_links = Vec::with_capacity(n_links);
    let mut iters: Vec<_> = links.iter_mut().map(|v| std::mem::take(v).into_iter()).collect();
    for l in 0..n_links {
        let owner = part.link_owner[l] as usize;
        for (d, it) in iters.iter_mut().enumerate() {
            let link = it.next().expect("every domain holds every link");
            if d == owner {
                merged_links.push(link);
            }
        }
    }
    m.links = merged_links;
    // Flows: the source's record, with the destination's receiving side and every domain's drops.
    let n_flows = flows[0].len();
    let mut iters: Vec<_> = flows.iter_mut().map(|v| std::mem::take(v).into_iter()).collect();
    let mut merged_flows = Vec::with_capacity(n_flows);
    for _ in 0..n_flows {
        let mut recs: Vec<_> = iters.iter_mut().map(|it| it.next().expect("every domain holds every flow")).collect();
        let drops: u64 = recs.iter().map(|r| r.drops).sum();
        let (s, t) = (part.node_domain[recs[0].src as usize] as usize, part.node_domain[recs[0].dst as usize] as usize);
        let recv = std::mem::replace(&mut recs[t].ep, Endpoints::NotStarted);
        let (delivered, first_byte_at, completed_at) = (recs[t].delivered, recs[t].first_byte_at, recs[t].completed_at);
        let mut rec = recs.swap_remove(s);
        rec.drops = drops;
        if s != t {
            rec.delivered = delivered;
            rec.first_byte_at = first_byte_at;
            rec.completed_at = completed_at;
            match (&mut rec.ep, recv) {
                (Endpoints::Bulk(ends), Endpoints::Bulk(r)) => {
                    let BulkEnds { receiver, .. } = *r;
                    ends.receiver = receiver;
                }
                (Endpoints::Done(stats), Endpoints::Bulk(r)) => stats.1 = r.receiver.stats(),
                _ => {}
            }
        } else {
            rec.ep = recv;
        }
        merged_flows.push(rec);
    }
    m.flows = merged_flows;
    // Samples, row by row in the serial order.
    let n_samples = samples[0].len();
    let mut rate = vec![(0.0f64, 0u64); n_flows];
    for k in 0..n_samples {
        let time_s = samples[0][k].time_s;
        for dom in &samples {
            for &(f, r, del) in &dom[k].receivers {
                rate[f as usize] = (r, del);
            }
        }
        let mut senders: Vec<&SenderRow> = samples.iter().flat_map(|d| d[k].senders.iter()).collect();
        senders.sort_by_key(|r| r.flow);
        for r in senders {
            let (rate, delivered) = rate[r.flow as usize];
            m.fs.f64("time_s", time_s)
                .i64("flow_id", r.flow as i64)
                .f64("rate_bps", rate)
                .i64("cwnd_bytes", r.cwnd)
                .i64("ssthresh_bytes", r.ssthresh)
                .f64("srtt_s", r.srtt)
                .i64("bytes_in_flight", r.inflight)
                .i64("delivered_bytes", delivered as i64)
                .f64("pacing_rate_bps", r.pacing)
                .str("cc_state", r.state)
                .f64("pacing_gain", r.gain);
        }
        let mut rows: Vec<&LinkRow> = samples.iter().flat_map(|d| d[k].links.iter()).collect();
        rows.sort_by_key(|r| r.link);
        for r in rows {
            m.ls.f64("time_s", time_s)
                .i64("link_id", r.link as i64)
                .f64("rate_bps", r.rate)
                .f64("utilisation", r.utilisation)
                .i64("queue_bytes", r.queue_bytes)
                .i64("queue_packets", r.queue_packets)
                .i64("drops", r.drops)
                .i64("marks", r.marks)
                .f64("gauge", r.gauge);
        }
    }
    m.check_invariants().map_err(RunError::Invariant)?;
    let stats =
        RunStats { events: m.events, packet_hops: m.packet_hops, sim_seconds: m.end.as_secs_f64(), wall_seconds };
    Ok(m.into_output(stats))
}
