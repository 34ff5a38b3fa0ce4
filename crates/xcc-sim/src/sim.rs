//! The simulation: builds topology, links and traffic from a resolved scenario, runs the event
//! loop, samples metrics, and checks invariants at the end.

use xcc_core::link::LinkAlgorithm;
use xcc_core::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use xcc_core::transport::{Receiver, ReceiverStats, Sender, SenderStats};
use xcc_core::wire::{Ecn, Segment, SegmentKind};
use xcc_core::{Dur, FlowId, Packet, Time};

use crate::capture::{self, CapturedPacket};
use crate::construct::{controller_at, echoer, transport_config};
use crate::engine::{Event, EventQueue};
use crate::link::{SimLink, SimPacket, Slot};
use crate::output::{RunOutput, RunStats, TableBuilder};
use crate::scenario::model::{self, Cc, FlowKind, Scenario, SizeDist};
use crate::session_group::{new_group, SessionGroup};
use xcc_core::prefetch::prefetch_bytes;

mod pfc;
mod session_metrics;
mod sessions;
use crate::scenario::ScenarioError;
use crate::topology::{Route, Routes};
use xcc_build::network::Network;
use xcc_core::link::model::Offer;

/// Why a run failed after its scenario was accepted.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    Scenario(ScenarioError),
    /// An end-of-run invariant does not hold: a simulator bug, reported loudly.
    Invariant(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Scenario(e) => write!(f, "{e}"),
            RunError::Invariant(m) => write!(f, "invariant violated: {m}"),
        }
    }
}
impl std::error::Error for RunError {}

/// What a flow is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Role {
    Bulk,
    Cbr,
    Arrival,
    Request(u32),
    Response(u32),
    Session,
}

impl Role {
    fn label(self) -> &'static str {
        match self {
            Role::Bulk => "bulk",
            Role::Cbr => "cbr",
            Role::Arrival => "arrival",
            Role::Request(_) => "request",
            Role::Response(_) => "response",
            Role::Session => "session",
        }
    }
}

/// Networks with at least this many link directions get the prefetch hints (the Medium
/// transit-stub network with its hosts has some 10^5; a dumbbell a few hundred).
const PREFETCH_MIN_LINKS: usize = 10_000;

/// The live state of a flow's endpoints.
enum Endpoints {
    NotStarted,
    Bulk(Box<BulkEnds>),
    Cbr {
        seq: u32,
        frac: u64,
        stopped: bool,
    },
    /// A session of an explicit-rate protocol: its source lives in the group; here is its data.
    Session {
        /// Data rate now (the assigned rate times the data share), bit/s; 0 sends nothing.
        data_bps: u64,
        /// When the next data packet is due (`Time::NEVER`: none); an earlier event is stale.
        next_send: Time,
        last_send: Option<Time>,
        /// Sub-nanosecond remainder of the spacing, as in cbr.
        frac: u64,
        seq: u32,
        /// Still sends data (until its size is sent, its stop, or the end).
        sending: bool,
        wake_at: Option<Time>,
        /// When its last data packet was delivered (`Time::NEVER`: none yet), for the
        /// session metrics' rate estimate.
        last_delivery: Time,
    },
    /// Finished and freed; final counters kept (boxed, as `Bulk`).
    Done(Box<(SenderStats, ReceiverStats)>),
}

/// A bulk flow's transport endpoints. Most of a record's size (a kilobyte of TCP state), so
/// boxed: the records of the flows that don't have them (100,000s of sessions) stay small and
/// dense, a few cache lines each instead of 1.4 kB.
struct BulkEnds {
    sender: Sender,
    receiver: Receiver,
}

struct FlowRec {
    name: String,
    role: Role,
    src: u32,
    dst: u32,
    start: Time,
    stop: Option<Time>,
    size: Option<u64>,
    cc: Option<Cc>,
    transport: Option<model::Transport>,
    cbr: Option<(u64, u32)>,
    fwd: Route,
    rev: Route,
    ep: Endpoints,
    sender_timer: Time,
    receiver_timer: Time,
    /// Payload bytes delivered in order to the receiving application.
    delivered: u64,
    delivered_at_sample: u64,
    completed_at: Option<Time>,
    first_byte_at: Option<Time>,
    cbr_sent_bytes: u64,
    /// Packets of this flow (data or ACKs) dropped or lost on any link.
    drops: u64,
    session: Option<SessionSpec>,
}

impl FlowRec {
    /// Starts loading the fields a packet of the flow touches when it is sent or delivered
    /// (the record is large, mostly a transport's state; these are a few of its lines).
    #[inline(always)]
    fn prefetch(&self) {
        prefetch_bytes(&self.ep, 64);
        prefetch_bytes(&self.session, 1);
        prefetch_bytes(&self.size, 1);
        prefetch_bytes(&self.delivered, 1);
        prefetch_bytes(&self.completed_at, 1);
        prefetch_bytes(&self.fwd, 1);
    }
}

/// What a session flow is, besides its route and size.
#[derive(Copy, Clone, Debug)]
struct SessionSpec {
    /// Its protocol's group and its number there.
    group: u32,
    local: u32,
    /// Requested maximum rate (API.Join's r), bit/s.
    demand: f64,
    protocol: &'static str,
    packet_bytes: u32,
}

struct Generator {
    spec: model::Arrivals,
    fwd: Route,
    rev: Route,
    rng: Pcg64Mcg,
    spawned: u32,
}

struct Txn {
    group: u32,
    /// Its place in the group, in start order.
    index: u32,
    start: Time,
    response_time: Option<Dur>,
    completed: Option<Dur>,
}

struct TxnGroup {
    spec: model::Transactions,
    req: (Route, Route),
    resp: (Route, Route),
}

/// A simulation, ready to run.
pub struct Simulation {
    scenario: Scenario,
    now: Time,
    end: Time,
    queue: EventQueue,
    links: Vec<SimLink>,
    routes: Routes,
    /// Prefetch the next deliveries' memory ([`Simulation::prefetch_next_deliveries`]): only
    /// for networks too large for the caches, where it halves a hop's time; on a dumbbell
    /// everything is in cache and the hints would only cost instructions.
    prefetch: bool,
    arena: Vec<SimPacket>,
    free: Vec<u32>,
    flows: Vec<FlowRec>,
    generators: Vec<Generator>,
    txn_groups: Vec<TxnGroup>,
    txns: Vec<Txn>,
    interval: Dur,
    fs: TableBuilder,
    ls: TableBuilder,
    link_last: Vec<(u64, u64, u64)>,
    // Conservation counters (packets, bytes) injected by hosts and received by hosts.
    sent: (u64, u64),
    received: (u64, u64),
    events: u64,
    packet_hops: u64,
    /// Session protocols, one group per protocol the scenario uses.
    groups: Vec<Box<dyn SessionGroup>>,
    /// Per group: every link's `bytes_in` at the group's last timer tick, and that tick.
    tick_bytes: Vec<(Time, Vec<u64>)>,
    /// Control packets (and bytes) a link task took out of the network.
    absorbed: (u64, u64),
    /// `[sessions]` error metrics, if sampled.
    sampler: Option<session_metrics::SessionSampler>,
    /// `[pfc]`: the lossless fabric's state (`sim/pfc.rs`); `None` without it.
    pfc: Option<Box<pfc::PfcRun>>,
}

impl Simulation {
    /// The simulation of a built network (`Network::build` has checked the routes and expanded
    /// a `[sessions]` table): its links take the network's algorithms and random streams, its
    /// flows the network's routes and session groups.
    pub fn new(network: Network, metrics: bool) -> Simulation {
        let Network {
            scenario,
            links: built,
            routes,
            flow_routes,
            arrival_routes,
            transaction_routes,
            sessions: session_groups,
        } = network;
        let seed = scenario.seed;
        let links: Vec<SimLink> = scenario
            .links
            .iter()
            .zip(built)
            .map(|(l, b)| {
                let mut link = SimLink::new(
                    l.rate_bps,
                    Dur(l.delay_ns),
                    l.buffer.packets.unwrap_or(u64::MAX),
                    l.buffer.bytes.unwrap_or(u64::MAX),
                    b.algorithm,
                    b.loss_rng,
                );
                link.loss = l.loss;
                link.jitter_ns = l.jitter_ns.min(u32::MAX as u64) as u32;
                link
            })
            .collect();

        let mut queue = EventQueue::new();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for (i, f) in scenario.flows.iter().enumerate() {
            let (fwd, rev) = flow_routes[i];
            let mut session = None;
            let (role, size, cc, transport, cbr) = match f.kind {
                FlowKind::Bulk { size_bytes, cc, transport } => {
                    (Role::Bulk, size_bytes, Some(cc), Some(transport), None)
                }
                FlowKind::Cbr { rate_bps, packet_bytes } => {
                    (Role::Cbr, None, None, None, Some((rate_bps, packet_bytes)))
                }
                FlowKind::Session { protocol, size_bytes, demand_bps, packet_bytes } => {
                    let (group, local) = session_groups.of_flow[i].expect("a session flow has a group");
                    let demand = demand_bps.map_or(f64::INFINITY, |d| d as f64);
                    session = Some(SessionSpec { group, local, demand, protocol: protocol.name(), packet_bytes });
                    (Role::Session, size_bytes, None, None, None)
                }
            };
            flows.push(FlowRec::new(
                f.name.clone(),
                role,
                f.src,
                f.dst,
                Time(f.start_ns),
                f.stop_ns.map(Time),
                size,
                cc,
                transport,
                cbr,
                fwd,
                rev,
            ));
            flows.last_mut().expect("just pushed").session = session;
            queue.schedule(Time(f.start_ns), Event::FlowStart(i as u32));
            if let Some(stop) = f.stop_ns {
                queue.schedule(Time(stop), Event::FlowStop(i as u32));
            }
        }
        let mut generators = Vec::new();
        for (g, a) in scenario.arrivals.iter().enumerate() {
            let (fwd, rev) = arrival_routes[g];
            queue.schedule(Time(a.start_ns), Event::Arrival(g as u32));
            generators.push(Generator {
                spec: a.clone(),
                fwd,
                rev,
                rng: component_rng(seed, kind::GENERATOR, g as u64),
                spawned: 0,
            });
        }
        let mut txn_groups = Vec::new();
        let mut txns = Vec::new();
        for (g, t) in scenario.transactions.iter().enumerate() {
            let [req, resp] = transaction_routes[g];
            // Spread uniformly (evenly spaced) over [start, stop).
            for k in 0..t.count as u64 {
                let at = Time(t.start_ns + (t.stop_ns - t.start_ns) * k / t.count as u64);
                queue.schedule(at, Event::Transaction(txns.len() as u32));
                txns.push(Txn { group: g as u32, index: k as u32, start: at, response_time: None, completed: None });
            }
            txn_groups.push(TxnGroup { spec: t.clone(), req, resp });
        }
        for (i, l) in links.iter().enumerate() {
            if let Some(t) = l.algo.poll_timeout() {
                queue.schedule(t, Event::LinkTimer(i as u32));
            }
        }
        let groups: Vec<Box<dyn SessionGroup>> = session_groups
            .protocols
            .iter()
            .zip(&session_groups.counts)
            .map(|(p, &n)| new_group(p, n as usize, links.len()))
            .collect();
        for (g, group) in groups.iter().enumerate() {
            if let Some(d) = group.tick_interval() {
                queue.schedule(Time::ZERO + d, Event::SessionTick(g as u32));
            }
        }
        let tick_bytes = groups.iter().map(|_| (Time::ZERO, vec![0; links.len()])).collect();
        let interval = Dur(scenario.metrics.interval_ns);
        let metrics = metrics && interval > Dur::ZERO;
        if metrics {
            queue.schedule(Time::ZERO + interval, Event::Sample);
        }
        let n_links = links.len();
        let sampler = scenario.sessions.as_ref().filter(|w| w.sample_interval_ns > 0).map(|w| {
            let (interval, window) = (Dur(w.sample_interval_ns), Dur(w.rate_window_ns));
            let end = Time(scenario.duration_ns);
            session_metrics::SessionSampler::new(interval, window, end, (flows.len(), n_links), &mut queue)
        });
        let pfc = pfc::PfcRun::new(&scenario);
        Simulation {
            pfc,
            end: Time(scenario.duration_ns),
            scenario,
            now: Time::ZERO,
            queue,
            prefetch: n_links >= PREFETCH_MIN_LINKS,
            links,
            routes,
            arena: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            flows,
            generators,
            txn_groups,
            txns,
            interval,
            fs: TableBuilder::for_table("flow_series"),
            ls: TableBuilder::for_table("link_series"),
            link_last: vec![(0, 0, 0); n_links],
            sent: (0, 0),
            received: (0, 0),
            events: 0,
            packet_hops: 0,
            groups,
            tick_bytes,
            absorbed: (0, 0),
            sampler,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Records the packets departing link direction `name` (`"a->b"`) for
    /// `RunOutput::capture`. Costs nothing on the other links.
    pub fn capture_link(&mut self, name: &str) -> Result<(), ScenarioError> {
        match self.scenario.links.iter().position(|l| l.name == name) {
            Some(i) => {
                self.links[i].start_capture();
                Ok(())
            }
            None => {
                let known: Vec<&str> = self.scenario.links.iter().map(|l| l.name.as_str()).collect();
                Err(ScenarioError {
                    source: String::new(),
                    path: "pcap".into(),
                    message: format!("no link direction {name:?}; expected one of {}", known.join(", ")),
                })
            }
        }
    }

    /// Runs to the scenario's duration. `progress` gets the simulated fraction now and then.
    pub fn run(mut self, mut progress: Option<&mut dyn FnMut(f64)>) -> Result<RunOutput, RunError> {
        let wall = std::time::Instant::now();
        while let Some((t, ev)) = self.queue.pop_due(self.end) {
            self.now = t;
            self.events += 1;
            if self.prefetch {
                self.prefetch_next_deliveries();
            }
            match ev {
                Event::LinkDeliver(l) => self.on_link_deliver(l),
                Event::SenderTimer(f) => self.on_sender_timer(f, t),
                Event::ReceiverTimer(f) => self.on_receiver_timer(f, t),
                Event::LinkTimer(l) => self.on_link_timer(l, t),
                Event::FlowStart(f) => self.start_flow(f),
                Event::FlowStop(f) => self.stop_flow(f),
                Event::CbrSend(f) => self.cbr_send(f),
                Event::Arrival(g) => self.on_arrival(g),
                Event::Transaction(k) => self.on_transaction(k),
                Event::Sample => self.sample(),
                Event::SessionSend(f) => self.session_send(f, t),
                Event::SessionWake(f) => self.session_wake(f, t),
                Event::SessionTick(g) => self.session_tick(g),
                Event::SessionWindow => self.session_window(),
                Event::SessionSample => self.session_sample(),
                Event::PfcDeparture(l) => self.on_pfc_departure(l),
                Event::PfcFrame(l) => self.on_pfc_frame(l),
            }
            if self.events & 0x3FFFF == 0 {
                if let Some(p) = progress.as_mut() {
                    p(self.now.as_secs_f64() / self.end.as_secs_f64());
                }
            }
        }
        self.now = self.end;
        for l in &mut self.links {
            l.settle(self.end, &mut self.arena[..]);
        }
        self.check_invariants().map_err(RunError::Invariant)?;
        let stats = RunStats {
            events: self.events,
            packet_hops: self.packet_hops,
            sim_seconds: self.end.as_secs_f64(),
            wall_seconds: wall.elapsed().as_secs_f64(),
        };
        Ok(self.into_output(stats))
    }

    /// Starts the memory loads of the next deliveries while this event runs, one step of each
    /// one's chain per event, a couple of events apart so that each load has arrived before
    /// the next step needs it: the link (five deliveries ahead), its pipe entries (three
    /// ahead), then from the head packet (in cache by then) the link it goes to or, at its
    /// last link, its flow record. At large scale each is a cache miss that would otherwise
    /// come in a chain. The next session send's flow record is loaded too.
    #[inline(always)]
    fn prefetch_next_deliveries(&self) {
        let ahead = self.queue.next_deliveries::<6>();
        if let Some(l) = ahead[5] {
            self.links[l as usize].prefetch();
        }
        if let Some(l) = ahead[3] {
            self.links[l as usize].prefetch_pipe();
        }
        if let Some(slot) = ahead[1].and_then(|l| self.links[l as usize].head()) {
            if slot.next != Routes::END {
                self.links[slot.next as usize].prefetch();
                prefetch_bytes(&self.routes.links[slot.pos as usize + 1], 1);
            } else {
                prefetch_bytes(&self.arena[slot.idx as usize], size_of::<SimPacket>());
                self.flows[slot.flow as usize].prefetch();
            }
        }
        if let Some(slot) = ahead[0].and_then(|l| self.links[l as usize].head()) {
            if slot.next != Routes::END {
                self.links[slot.next as usize].prefetch_pipe();
            }
        }
        if let Some(Event::SessionSend(f)) = self.queue.next_cold() {
            self.flows[f as usize].prefetch();
        }
    }

    // ---- packets -------------------------------------------------------------------------

    #[inline]
    fn alloc(&mut self, sp: SimPacket) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.arena[i as usize] = sp;
                i
            }
            None => {
                self.arena.push(sp);
                (self.arena.len() - 1) as u32
            }
        }
    }

    /// A host puts a packet on the first link of `route`.
    #[inline]
    fn inject(&mut self, pkt: Packet, route: Route) {
        self.sent.0 += 1;
        self.sent.1 += pkt.wire_bytes as u64;
        let idx = self.alloc(SimPacket { pkt, route, hop: 0, ctrl: 0 });
        self.offer(self.routes.hop(route, 0), idx);
    }

    /// Offers packet `idx` to link `l`, where its `hop` says it is: a data packet gets the
    /// rest of its way in its link item, a control packet comes back to the simulation at
    /// every hop.
    #[inline]
    fn offer(&mut self, l: u32, idx: u32) {
        let sp = &self.arena[idx as usize];
        let slot = if sp.ctrl == 0 {
            let pos = sp.route.start + sp.hop + 1;
            Slot::new(idx, sp, self.routes.at(pos), pos)
        } else {
            Slot::new(idx, sp, Routes::END, 0)
        };
        self.offer_slot(l, slot);
    }

    #[inline]
    fn offer_slot(&mut self, l: u32, slot: Slot) {
        let link = &mut self.links[l as usize];
        match link.offer(self.now, slot, &mut self.arena[..]) {
            Offer::Dropped(_) => {
                let idx = slot.idx;
                let sp = &self.arena[idx as usize];
                let (f, ctrl) = (sp.pkt.flow.0, sp.ctrl);
                self.flows[f as usize].drops += 1;
                self.free.push(idx);
                if ctrl != 0 {
                    self.discard_control(f, ctrl - 1);
                }
            }
            Offer::Queued { first } => {
                if first {
                    let t = link.next_delivery().expect("just queued");
                    self.queue.schedule(t, Event::LinkDeliver(l));
                }
                if self.pfc.is_some() {
                    self.pfc_queued(l, slot);
                }
            }
        }
    }

    #[inline]
    fn on_link_deliver(&mut self, l: u32) {
        let link = &mut self.links[l as usize];
        let slot = link.deliver(self.now, &mut self.arena[..]);
        if let Some(t) = link.next_delivery() {
            self.queue.schedule(t, Event::LinkDeliver(l));
        }
        self.packet_hops += 1;
        // A data packet in transit: its item knows the next link; the arena is not touched.
        if slot.next != Routes::END {
            self.offer_slot(slot.next, slot.advanced(&self.routes));
            return;
        }
        let idx = slot.idx;
        let sp = &mut self.arena[idx as usize];
        if sp.ctrl != 0 {
            sp.hop += 1;
            self.session_hop(idx);
            return;
        }
        self.received.0 += 1;
        self.received.1 += sp.pkt.wire_bytes as u64;
        self.at_host(idx);
        self.free.push(idx);
    }

    /// Packet `idx` reached the host at the end of its route (the caller frees it after).
    #[inline]
    fn at_host(&mut self, idx: u32) {
        let pkt = &self.arena[idx as usize].pkt;
        let f = pkt.flow.0;
        let rec = &mut self.flows[f as usize];
        match &mut rec.ep {
            Endpoints::Bulk(ends) => {
                let BulkEnds { sender, receiver } = &mut **ends;
                if pkt.seg.kind == SegmentKind::Ack {
                    sender.on_packet(self.now, pkt);
                    self.drain_sender(f);
                } else {
                    let got = receiver.on_packet(self.now, pkt);
                    self.on_delivered(f, got);
                    self.drain_receiver(f);
                }
            }
            Endpoints::Cbr { .. } => {
                rec.delivered += pkt.seg.payload_bytes as u64;
                if rec.first_byte_at.is_none() {
                    rec.first_byte_at = Some(self.now);
                }
            }
            // A session's data (its control packets never get here: `session_hop`).
            Endpoints::Session { last_delivery, .. } => {
                *last_delivery = self.now;
                let bytes = pkt.seg.payload_bytes as u64;
                self.on_delivered(f, bytes);
            }
            // Late packets of a finished flow (or of one whose state is gone) are absorbed.
            Endpoints::Done(_) | Endpoints::NotStarted => {}
        }
    }

    fn on_delivered(&mut self, f: u32, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        rec.delivered += bytes;
        if rec.first_byte_at.is_none() {
            rec.first_byte_at = Some(now);
            if let Role::Response(k) = rec.role {
                let t = &mut self.txns[k as usize];
                t.response_time = Some(now - t.start);
            }
        }
        if rec.completed_at.is_none() && rec.size.is_some_and(|s| rec.delivered >= s) {
            rec.completed_at = Some(now);
            match rec.role {
                Role::Request(k) => self.start_response(k),
                Role::Response(k) => {
                    let t = &mut self.txns[k as usize];
                    t.completed = Some(now - t.start);
                }
                _ => {}
            }
        }
    }

    fn drain_sender(&mut self, f: u32) {
        let now = self.now;
        let route = self.flows[f as usize].fwd;
        loop {
            let Endpoints::Bulk(ends) = &mut self.flows[f as usize].ep else {
                return;
            };
            match ends.sender.poll_transmit(now) {
                Some(p) => self.inject(p, route),
                None => break,
            }
        }
        let rec = &mut self.flows[f as usize];
        let Endpoints::Bulk(ends) = &mut rec.ep else {
            return;
        };
        let BulkEnds { sender, receiver } = &mut **ends;
        if sender.is_complete() {
            // Every byte is acknowledged: keep the counters, free the state.
            rec.ep = Endpoints::Done(Box::new((sender.stats(), receiver.stats())));
            return;
        }
        let due = sender.poll_timeout().unwrap_or(Time::NEVER).max(now);
        if due < rec.sender_timer {
            rec.sender_timer = due;
            self.queue.schedule(due, Event::SenderTimer(f));
        }
    }

    fn drain_receiver(&mut self, f: u32) {
        let now = self.now;
        let route = self.flows[f as usize].rev;
        loop {
            let Endpoints::Bulk(ends) = &mut self.flows[f as usize].ep else {
                return;
            };
            match ends.receiver.poll_transmit(now) {
                Some(p) => self.inject(p, route),
                None => break,
            }
        }
        let rec = &mut self.flows[f as usize];
        let Endpoints::Bulk(ends) = &mut rec.ep else {
            return;
        };
        let due = ends.receiver.poll_timeout().unwrap_or(Time::NEVER).max(now);
        if due < rec.receiver_timer {
            rec.receiver_timer = due;
            self.queue.schedule(due, Event::ReceiverTimer(f));
        }
    }

    fn on_sender_timer(&mut self, f: u32, t: Time) {
        let rec = &mut self.flows[f as usize];
        if rec.sender_timer != t {
            return; // superseded by an earlier deadline
        }
        rec.sender_timer = Time::NEVER;
        if let Endpoints::Bulk(ends) = &mut rec.ep {
            ends.sender.on_timeout(t);
            self.drain_sender(f);
        }
    }

    fn on_receiver_timer(&mut self, f: u32, t: Time) {
        let rec = &mut self.flows[f as usize];
        if rec.receiver_timer != t {
            return;
        }
        rec.receiver_timer = Time::NEVER;
        if let Endpoints::Bulk(ends) = &mut rec.ep {
            ends.receiver.on_timeout(t);
            self.drain_receiver(f);
        }
    }

    fn on_link_timer(&mut self, l: u32, t: Time) {
        let link = &mut self.links[l as usize];
        link.advance(t, &mut self.arena[..]);
        let backlog = link.waiting_bytes();
        link.algo.on_timeout(t, backlog);
        if let Some(next) = link.algo.poll_timeout() {
            self.queue.schedule(next.max(t), Event::LinkTimer(l));
        }
    }

    // ---- traffic -------------------------------------------------------------------------

    fn start_flow(&mut self, f: u32) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        if !matches!(rec.ep, Endpoints::NotStarted) {
            return;
        }
        match (rec.cc, rec.transport, rec.cbr) {
            (Some(cc), Some(t), _) => {
                let cfg = transport_config(&t);
                let nic_rate_bps = self.links[self.routes.hop(rec.fwd, 0) as usize].rate_bps;
                let sender = Sender::new(FlowId(f), cfg, controller_at(&cc, &t, nic_rate_bps), rec.size, now);
                let (fwd, rev) = (rec.fwd, rec.rev);
                let delay = |r: Route| -> u64 {
                    (0..r.len).map(|k| self.links[self.routes.hop(r, k) as usize].delay.as_ns()).sum()
                };
                let echo = echoer(&cc, Dur(delay(fwd) + delay(rev)));
                let rec = &mut self.flows[f as usize];
                let receiver = Receiver::new(FlowId(f), cfg, echo);
                rec.ep = Endpoints::Bulk(Box::new(BulkEnds { sender, receiver }));
                self.drain_sender(f);
            }
            (_, _, Some(_)) => {
                rec.ep = Endpoints::Cbr { seq: 0, frac: 0, stopped: false };
                self.queue.schedule(now, Event::CbrSend(f));
            }
            _ if rec.session.is_some() => self.start_session(f),
            _ => unreachable!("flow without traffic"),
        }
    }

    fn stop_flow(&mut self, f: u32) {
        match &mut self.flows[f as usize].ep {
            Endpoints::Bulk(ends) => ends.sender.stop(),
            Endpoints::Cbr { stopped, .. } => *stopped = true,
            Endpoints::Session { .. } => self.end_session_data(f),
            _ => {}
        }
    }

    fn cbr_send(&mut self, f: u32) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        let (rate, size) = rec.cbr.expect("cbr flow");
        let Endpoints::Cbr { seq, frac, stopped } = &mut rec.ep else {
            return;
        };
        if *stopped {
            return;
        }
        let pkt = Packet {
            flow: FlowId(f),
            wire_bytes: size,
            ecn: Ecn::NotEct,
            seg: Segment {
                kind: SegmentKind::Datagram,
                seq: *seq,
                payload_bytes: size,
                ts_val: now,
                ..Segment::default()
            },
            ..Packet::default()
        };
        *seq = seq.wrapping_add(1);
        // Exact long-run rate: carry the sub-nanosecond remainder of the spacing.
        let num = size as u64 * 8_000_000_000 + *frac;
        *frac = num % rate;
        let next = now + Dur(num / rate);
        rec.cbr_sent_bytes += size as u64;
        let route = rec.fwd;
        self.inject(pkt, route);
        self.queue.schedule(next, Event::CbrSend(f));
    }

    fn on_arrival(&mut self, g: u32) {
        let now = self.now;
        let gen = &mut self.generators[g as usize];
        let a = &gen.spec;
        let size = match a.size {
            SizeDist::Fixed { bytes } => bytes,
            SizeDist::Exponential { mean_bytes } => {
                (-mean_bytes * (1.0 - uniform01(&mut gen.rng)).ln()).ceil().max(1.0) as u64
            }
            SizeDist::Pareto { mean_bytes, shape } => {
                // Scale x_m from the mean: E[X] = shape x_m / (shape - 1).
                let xm = mean_bytes * (shape - 1.0) / shape;
                (xm / (1.0 - uniform01(&mut gen.rng)).powf(1.0 / shape)).ceil().max(1.0) as u64
            }
        };
        gen.spawned += 1;
        let name = format!("{}#{}", a.name, gen.spawned);
        let rec = FlowRec::new(
            name,
            Role::Arrival,
            a.src,
            a.dst,
            now,
            None,
            Some(size),
            Some(a.cc),
            Some(a.transport),
            None,
            gen.fwd,
            gen.rev,
        );
        let gap = Dur::from_secs_f64(-(a.mean_interarrival_ns as f64 * 1e-9) * (1.0 - uniform01(&mut gen.rng)).ln());
        let next = now + gap;
        if next < Time(a.stop_ns) {
            self.queue.schedule(next, Event::Arrival(g));
        }
        self.flows.push(rec);
        self.start_flow((self.flows.len() - 1) as u32);
    }

    /// Transaction `k` starts: the client sends its request.
    fn on_transaction(&mut self, k: u32) {
        self.start_txn_flow(k, false);
    }

    /// The server has the whole request of transaction `k`: it sends the response.
    fn start_response(&mut self, k: u32) {
        self.start_txn_flow(k, true);
    }

    fn start_txn_flow(&mut self, k: u32, response: bool) {
        let now = self.now;
        let txn = &self.txns[k as usize];
        let grp = &self.txn_groups[txn.group as usize];
        let t = &grp.spec;
        let (role, part, src, dst, bytes, (fwd, rev)) = if response {
            (Role::Response(k), "response", t.server, t.client, t.response_bytes, grp.resp)
        } else {
            (Role::Request(k), "request", t.client, t.server, t.request_bytes, grp.req)
        };
        let name = format!("{}#{}/{}", t.name, k, part);
        // The request opens a connection (or reuses the group's persistent one); the response
        // rides on it: no SYN of its own.
        let transport = model::Transport { handshake: !response && t.opens_connection(txn.index), ..t.transport };
        let rec =
            FlowRec::new(name, role, src, dst, now, None, Some(bytes), Some(t.cc), Some(transport), None, fwd, rev);
        self.flows.push(rec);
        self.start_flow((self.flows.len() - 1) as u32);
    }

    // ---- metrics -------------------------------------------------------------------------

    fn sample(&mut self) {
        let now = self.now;
        let secs = now.as_secs_f64();
        let dt = self.interval.as_secs_f64();
        for (i, rec) in self.flows.iter_mut().enumerate() {
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
            // The controller's pacing rate and named state (BBR's mode and gain), for plots.
            let (pacing, state, gain) = match &rec.ep {
                Endpoints::Bulk(ends) => {
                    use xcc_core::host::Controller as _;
                    let c = ends.sender.controller();
                    (c.pacing_rate_bps(), c.state_label(), c.current_pacing_gain())
                }
                _ => (None, None, None),
            };
            let rate = (rec.delivered - rec.delivered_at_sample) as f64 * 8.0 / dt;
            rec.delivered_at_sample = rec.delivered;
            self.fs
                .f64("time_s", secs)
                .i64("flow_id", i as i64)
                .f64("rate_bps", rate)
                .i64("cwnd_bytes", cwnd)
                .i64("ssthresh_bytes", ssthresh)
                .f64("srtt_s", srtt)
                .i64("bytes_in_flight", inflight)
                .i64("delivered_bytes", rec.delivered as i64)
                .f64("pacing_rate_bps", pacing.unwrap_or(f64::NAN))
                .str("cc_state", state.unwrap_or(""))
                .f64("pacing_gain", gain.unwrap_or(f64::NAN));
        }
        for (i, link) in self.links.iter_mut().enumerate() {
            link.advance(now, &mut self.arena[..]);
            let (last_out, last_drops, last_marks) = self.link_last[i];
            let s = &link.stats;
            let rate = (s.bytes_out - last_out) as f64 * 8.0 / dt;
            let drops = s.drops + s.losses;
            self.ls
                .f64("time_s", secs)
                .i64("link_id", i as i64)
                .f64("rate_bps", rate)
                .f64("utilisation", rate / link.rate_bps as f64)
                .i64("queue_bytes", link.waiting_bytes() as i64)
                .i64("queue_packets", link.waiting_packets() as i64)
                .i64("drops", (drops - last_drops) as i64)
                .i64("marks", (s.marks - last_marks) as i64)
                .f64("gauge", link.algo.gauge());
            self.link_last[i] = (s.bytes_out, drops, s.marks);
        }
        let next = now + self.interval;
        if next <= self.end {
            self.queue.schedule(next, Event::Sample);
        }
    }

    // ---- invariants ----------------------------------------------------------------------

    fn check_invariants(&self) -> Result<(), String> {
        let (mut dropped, mut dropped_bytes, mut in_pipe, mut in_pipe_bytes) = (0u64, 0u64, 0u64, 0u64);
        for (i, l) in self.links.iter().enumerate() {
            let name = &self.scenario.links[i].name;
            let s = &l.stats;
            let (wb, wp) = l.recount_waiting();
            if (wb, wp) != (l.waiting_bytes(), l.waiting_packets()) {
                return Err(format!(
                    "link {name}: queue counters ({} B, {} pkt) disagree with its contents ({wb} B, {wp} pkt)",
                    l.waiting_bytes(),
                    l.waiting_packets()
                ));
            }
            if s.packets_in != s.drops + s.losses + s.packets_out + l.waiting_packets() {
                return Err(format!(
                    "link {name}: {} packets arrived but {} dropped + {} lost + {} sent + {} waiting",
                    s.packets_in,
                    s.drops,
                    s.losses,
                    s.packets_out,
                    l.waiting_packets()
                ));
            }
            if s.packets_out != s.delivered_packets + (l.pipe_len() as u64 - l.waiting_packets()) {
                return Err(format!("link {name}: sent packets are neither delivered nor on the wire"));
            }
            dropped += s.drops + s.losses;
            dropped_bytes += s.drop_bytes + s.loss_bytes;
            in_pipe += l.pipe_len() as u64;
            in_pipe_bytes += l.bytes_in_pipe();
        }
        let live = self.arena.len() as u64 - self.free.len() as u64;
        if live != in_pipe {
            return Err(format!("{live} packets are allocated but {in_pipe} are on links"));
        }
        let hops_in: u64 = self.links.iter().map(|l| l.stats.packets_in).sum();
        let _ = hops_in;
        // Link tasks may take a control packet out of the network (none of seed 004's do).
        let (dropped, dropped_bytes) = (dropped + self.absorbed.0, dropped_bytes + self.absorbed.1);
        if self.sent.0 != self.received.0 + dropped + in_pipe
            || self.sent.1 != self.received.1 + dropped_bytes + in_pipe_bytes
        {
            return Err(format!(
                "packet conservation: sent {} pkt / {} B, delivered {} / {}, dropped {} / {}, in flight {} / {}",
                self.sent.0,
                self.sent.1,
                self.received.0,
                self.received.1,
                dropped,
                dropped_bytes,
                in_pipe,
                in_pipe_bytes
            ));
        }
        self.check_sessions()?;
        self.check_lossless()?;
        for rec in &self.flows {
            if let Some(size) = rec.size {
                if rec.delivered > size {
                    return Err(format!("flow {}: delivered {} B of a {} B flow", rec.name, rec.delivered, size));
                }
            }
            let (snd, rcv) = match &rec.ep {
                Endpoints::Bulk(ends) => (ends.sender.stats_at(self.end), ends.receiver.stats()),
                Endpoints::Done(stats) => **stats,
                _ => continue,
            };
            // RFC 6298 section 5: the timer fires after one RTO with nothing acknowledged.
            if snd.rto_overdue > 0 {
                return Err(format!(
                    "flow {}: its retransmission timer did not fire although nothing new was acknowledged \
                     for longer than its RTO ({} times; RFC 6298 section 5)",
                    rec.name, snd.rto_overdue
                ));
            }
            if rcv.beyond_window > 0 {
                return Err(format!(
                    "flow {}: its receiver refused {} segments beyond the receive window: the sender passed its \
                     window cap",
                    rec.name, rcv.beyond_window
                ));
            }
        }
        Ok(())
    }

    // ---- summaries -----------------------------------------------------------------------

    fn into_output(mut self, stats: RunStats) -> RunOutput {
        let capture = self.take_capture();
        let (session_samples, session_rates) = self.finish_session_sampler();
        let end = self.end;
        let name = |n: u32| self.scenario.nodes[n as usize].name.as_str();
        let mut flows = TableBuilder::default();
        for (i, rec) in self.flows.iter().enumerate() {
            let (snd, rcv) = match &rec.ep {
                Endpoints::Bulk(ends) => (ends.sender.stats_at(end), ends.receiver.stats()),
                Endpoints::Done(stats) => **stats,
                _ => (SenderStats::default(), ReceiverStats::default()),
            };
            let active_until = rec.completed_at.unwrap_or(rec.stop.map_or(end, |s| s.min(end)));
            let active = active_until.saturating_since(rec.start).as_secs_f64();
            let secs_or_nan = |d: Dur| {
                if d == Dur::ZERO {
                    f64::NAN
                } else {
                    d.as_secs_f64()
                }
            };
            flows
                .i64("flow_id", i as i64)
                .str("name", &rec.name)
                .str("kind", rec.role.label())
                .str("src", name(rec.src))
                .str("dst", name(rec.dst))
                .str("cc", self.flow_cc_name(rec))
                .f64("start_s", rec.start.as_secs_f64())
                .f64("stop_s", rec.stop.map_or(f64::NAN, |t| t.as_secs_f64()))
                .i64("size_bytes", rec.size.map_or(-1, |s| s as i64))
                .i64(
                    "bytes_sent",
                    if rec.cbr.is_some() || rec.session.is_some() {
                        rec.cbr_sent_bytes as i64
                    } else {
                        snd.bytes_sent as i64
                    },
                )
                .i64("bytes_delivered", rec.delivered as i64)
                .f64("goodput_bps", if active > 0.0 { rec.delivered as f64 * 8.0 / active } else { f64::NAN })
                .f64("fct_s", rec.completed_at.map_or(f64::NAN, |t| (t - rec.start).as_secs_f64()))
                .i64("packets_dropped", rec.drops as i64)
                .i64("retransmits", snd.retransmits as i64)
                .i64("timeouts", snd.timeouts as i64)
                .i64("fast_recoveries", snd.fast_recoveries as i64)
                .i64("ecn_reductions", snd.ecn_reductions as i64)
                .i64("ce_received", rcv.ce_received as i64)
                .f64("min_rtt_s", secs_or_nan(snd.min_rtt))
                .f64("srtt_s", secs_or_nan(snd.srtt))
                .i64("window_capped", snd.window_capped as i64)
                .i64("rto_overdue", snd.rto_overdue as i64);
        }
        let mut links = TableBuilder::default();
        let dur = end.as_secs_f64();
        for (i, l) in self.links.iter().enumerate() {
            let m = &self.scenario.links[i];
            let s = &l.stats;
            let buffer_packets = m.buffer.packets.map_or(-1, |p| p as i64);
            let buffer_bytes = m.buffer.bytes.map_or(-1, |b| b as i64);
            let mean_q_bytes = s.queue_byte_ns as f64 / end.as_ns() as f64;
            links
                .i64("link_id", i as i64)
                .str("name", &m.name)
                .str("src", name(m.from))
                .str("dst", name(m.to))
                .f64("rate_bps", m.rate_bps as f64)
                .f64("delay_s", m.delay_ns as f64 * 1e-9)
                .i64("buffer_packets", buffer_packets)
                .i64("buffer_bytes", buffer_bytes)
                .str("algorithm", m.queue.name())
                .i64("packets_in", s.packets_in as i64)
                .i64("bytes_in", s.bytes_in as i64)
                .i64("packets_out", s.packets_out as i64)
                .i64("bytes_out", s.bytes_out as i64)
                .i64("drops", (s.drops + s.losses) as i64)
                .i64("marks", s.marks as i64)
                .f64("mean_queue_bytes", mean_q_bytes)
                .f64("mean_queue_packets", s.queue_packet_ns as f64 / end.as_ns() as f64)
                .i64("max_queue_bytes", s.max_queue_bytes as i64)
                .f64(
                    "mean_queue_delay_s",
                    if s.packets_out > 0 { s.wait_ns as f64 * 1e-9 / s.packets_out as f64 } else { f64::NAN },
                )
                .f64("utilisation", s.bytes_out as f64 * 8.0 / (m.rate_bps as f64 * dur))
                .i64("data_bytes_out", s.data_bytes_out as i64);
        }
        let mut txns = TableBuilder::default();
        for (k, t) in self.txns.iter().enumerate() {
            let g = &self.txn_groups[t.group as usize].spec;
            txns.i64("txn_id", k as i64)
                .str("name", &g.name)
                .str("client", name(g.client))
                .str("server", name(g.server))
                .i64("request_bytes", g.request_bytes as i64)
                .i64("response_bytes", g.response_bytes as i64)
                .f64("start_s", t.start.as_secs_f64())
                .f64("response_time_s", t.response_time.map_or(f64::NAN, |d| d.as_secs_f64()))
                .f64("completion_time_s", t.completed.map_or(f64::NAN, |d| d.as_secs_f64()));
        }
        let pfc_ports = self.pfc_table();
        RunOutput {
            pfc_ports,
            stats,
            flow_series: self.fs.finish(),
            link_series: self.ls.finish(),
            flows: flows.finish(),
            links: links.finish(),
            transactions: txns.finish(),
            session_samples,
            session_rates,
            capture,
        }
    }

    /// The `cc` column of a flow: its congestion control, its session protocol, or none.
    fn flow_cc_name(&self, rec: &FlowRec) -> &'static str {
        match (rec.session, rec.cc) {
            (Some(s), _) => s.protocol,
            (None, Some(c)) => c.name(),
            (None, None) => "none",
        }
    }

    /// The packets of the capturing links, encoded (`capture::encode`); `None` if none captured.
    fn take_capture(&mut self) -> Option<Vec<CapturedPacket>> {
        let mut out: Option<Vec<CapturedPacket>> = None;
        for link in self.links.iter_mut().filter(|l| l.is_capturing()) {
            let v = out.get_or_insert_with(Vec::new);
            for (t, pkt) in link.take_capture() {
                let f = &self.flows[pkt.flow.0 as usize];
                let mut c = capture::encode(&pkt, f.src, f.dst, v.len() as u16);
                c.time = t;
                v.push(c);
            }
        }
        out
    }
}

impl FlowRec {
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        role: Role,
        src: u32,
        dst: u32,
        start: Time,
        stop: Option<Time>,
        size: Option<u64>,
        cc: Option<Cc>,
        transport: Option<model::Transport>,
        cbr: Option<(u64, u32)>,
        fwd: Route,
        rev: Route,
    ) -> FlowRec {
        FlowRec {
            name,
            role,
            src,
            dst,
            start,
            stop,
            size,
            cc,
            transport,
            cbr,
            fwd,
            rev,
            ep: Endpoints::NotStarted,
            sender_timer: Time::NEVER,
            receiver_timer: Time::NEVER,
            delivered: 0,
            delivered_at_sample: 0,
            completed_at: None,
            first_byte_at: None,
            cbr_sent_bytes: 0,
            drops: 0,
            session: None,
        }
    }
}

#[cfg(test)]
mod tests {
    /// A session's flow record is read at each of its data sends and deliveries, and slbn-2a has
    /// 180,000 of them: it must stay a few cache lines, without a TCP connection's state inline
    /// (1.4 kB before that state was boxed).
    #[test]
    fn flow_records_stay_a_few_cache_lines() {
        let size = size_of::<super::FlowRec>();
        assert!(size <= 448, "FlowRec is {size} B");
    }
}
