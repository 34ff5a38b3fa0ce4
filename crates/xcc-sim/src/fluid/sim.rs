//! The session simulator: control packets at packet level through FIFO links, data as fluid
//! rates (docs/decisions.md, "Session experiments"), generic over [`SessionProtocol`].

use super::link::FluidLink;
use crate::event_heap::TimedQueue;
use crate::stats::mean_p10_p90;
use xcc_build::sessions::{session_paths, Graph, LinkTable, Paths, Sessions};
use xcc_core::analysis::maxmin::{max_min_fair, Allocation, Bottleneck, MaxMinProblem};
use xcc_core::session::{ControlPacket, Direction, Forward, Hop, LinkLoad, LinkTask, SessionProtocol, SourceTask};
use xcc_core::{Dur, Time};

/// How a run is driven (everything but the protocol, the network and the sessions).
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub duration: Time,
    /// Error metrics every `sample_interval` (the oracle runs at most once per sample, and only
    /// if the set of sessions changed).
    pub sample_interval: Dur,
    /// Share of the assigned rate sent as data (the rest is the control budget).
    pub data_share: f64,
    /// Also return each present session's rate and max-min rate at the end.
    pub record_final: bool,
}

/// One row per sample.
#[derive(Clone, Debug, Default)]
pub struct SampleTable {
    pub time_s: Vec<f64>,
    pub present: Vec<u64>,
    pub rated: Vec<u64>,
    pub es_mean: Vec<f64>,
    pub es_p10: Vec<f64>,
    pub es_p90: Vec<f64>,
    pub ee_mean: Vec<f64>,
    pub ee_p10: Vec<f64>,
    pub ee_p90: Vec<f64>,
    pub ee_max: Vec<f64>,
    pub bottlenecks: Vec<u64>,
    /// Largest backlog of any link since the previous sample, bits, and that link's capacity.
    pub max_queue_bits: Vec<f64>,
    pub max_queue_capacity: Vec<f64>,
    /// Largest backlog in seconds of transmission (`queue / capacity`) since the previous sample.
    pub max_queue_delay_s: Vec<f64>,
}

/// Finite sessions: size and completion.
#[derive(Clone, Debug, Default)]
pub struct CompletionTable {
    pub session: Vec<u32>,
    pub size_bits: Vec<f64>,
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
}

/// Rates at the end of the run (with `record_final`).
#[derive(Clone, Debug, Default)]
pub struct FinalTable {
    pub session: Vec<u32>,
    pub rate_bps: Vec<f64>,
    pub maxmin_bps: Vec<f64>,
}

#[derive(Clone, Debug, Default)]
pub struct SessionStats {
    pub events: u64,
    pub control_packets: u64,
    /// Link crossings of control packets (the packet-hops of this driver).
    pub control_hops: u64,
    pub oracle_runs: u64,
    pub oracle_wall_s: f64,
    pub links: u64,
    pub hosts_in_use: u64,
    pub sessions: u64,
    pub routers: u64,
}

#[derive(Clone, Debug, Default)]
pub struct SessionOutput {
    pub samples: SampleTable,
    pub completions: CompletionTable,
    pub finals: FinalTable,
    pub stats: SessionStats,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start(u32),
    Stop(u32),
    Wake(u32),
    Ctrl(u32),
    Done(u32, u32),
    Tick,
    Sample,
}

struct Ctrl<B> {
    session: u32,
    pos: u16,
    dir: Direction,
    body: B,
}

#[derive(Clone, Debug, Default)]
struct SessionState {
    present: bool,
    /// Still has data to send (finite sessions stop at their size).
    sending: bool,
    /// Data rate injected now, bit/s.
    data_rate: f64,
    sent_bits: f64,
    since: Time,
    done_version: u32,
    wake_at: Option<Time>,
}

/// The simulation of one protocol.
pub struct SessionSim<P: SessionProtocol> {
    params: P::Params,
    settings: RunSettings,
    sessions: Sessions,
    paths: Paths,
    links: LinkTable,
    tasks: Vec<P::Link>,
    fluid: Vec<FluidLink>,
    state: Vec<SessionState>,
    sources: Vec<Option<P::Source>>,
    pkts: Vec<Option<Ctrl<P::Packet>>>,
    free: Vec<u32>,
    events: TimedQueue<Ev>,
    now: Time,
    /// Bumped when the set of present sessions changes (the oracle is reused otherwise).
    membership: u64,
    oracle: Option<(u64, Vec<u32>, Allocation)>,
    tick: Option<Dur>,
    last_tick: Time,
    /// Control packets put into the network (by sources and destinations) and taken out.
    created: u64,
    consumed: u64,
    out: SessionOutput,
}

impl<P: SessionProtocol> SessionSim<P> {
    /// Routes every session (host links are created for the hosts sessions use, only).
    pub fn new(params: P::Params, net: &Graph, sessions: Sessions, settings: RunSettings) -> Result<Self, String> {
        let mut links = LinkTable::new(net);
        let max_hops = xcc_core::algorithms::slbn::HopSet::MAX_HOPS.min(u16::MAX as usize);
        let paths =
            session_paths(net, &mut links, &sessions.src, &sessions.dst, max_hops).map_err(|e| e.to_string())?;
        let tasks: Vec<P::Link> = links.capacity.iter().map(|&c| P::new_link(&params, c)).collect();
        let fluid = (0..links.len()).map(|l| FluidLink::new(links.capacity[l], links.delay[l])).collect();
        let tick = tasks.first().and_then(|t| t.tick_interval());
        let n = sessions.len();
        let out = SessionOutput {
            stats: SessionStats {
                links: links.len() as u64,
                hosts_in_use: links.hosts_in_use() as u64,
                sessions: n as u64,
                routers: net.routers as u64,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut sim = SessionSim {
            params,
            settings,
            paths,
            links,
            tasks,
            fluid,
            state: vec![SessionState::default(); n],
            sources: (0..n).map(|_| None).collect(),
            pkts: Vec::new(),
            free: Vec::new(),
            events: TimedQueue::default(),
            now: Time::ZERO,
            membership: 0,
            oracle: None,
            tick,
            last_tick: Time::ZERO,
            created: 0,
            consumed: 0,
            out,
            sessions,
        };
        for s in 0..n {
            sim.push(sim.sessions.start[s], Ev::Start(s as u32));
            if let Some(t) = sim.sessions.stop[s] {
                sim.push(t, Ev::Stop(s as u32));
            }
        }
        let first = Time::ZERO + sim.settings.sample_interval;
        sim.push(first, Ev::Sample);
        if let Some(d) = tick {
            sim.push(Time::ZERO + d, Ev::Tick);
        }
        Ok(sim)
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.events.push(t, ev);
    }

    /// Runs to the end; `progress` gets the simulated fraction now and then. Errors are broken
    /// invariants (checked at the end of every run).
    pub fn run(mut self, mut progress: Option<&mut dyn FnMut(f64)>) -> Result<SessionOutput, String> {
        let end = self.settings.duration;
        while let Some((t, ev)) = self.events.pop() {
            if t > end {
                break;
            }
            self.now = t;
            self.out.stats.events += 1;
            if self.out.stats.events.is_multiple_of(500_000) {
                if let Some(p) = progress.as_mut() {
                    p(t.as_secs_f64() / end.as_secs_f64().max(1e-12));
                }
            }
            match ev {
                Ev::Start(s) => self.start(s as usize),
                Ev::Stop(s) => self.stop(s as usize),
                Ev::Wake(s) => {
                    if self.state[s as usize].wake_at == Some(t) {
                        self.state[s as usize].wake_at = None;
                        self.after_source(s as usize);
                    }
                }
                Ev::Ctrl(k) => self.control(k),
                Ev::Done(s, v) => {
                    if self.state[s as usize].done_version == v {
                        self.finish_data(s as usize);
                    }
                }
                Ev::Tick => self.tick(),
                Ev::Sample => {
                    self.sample();
                    let next = t + self.settings.sample_interval;
                    self.push(next, Ev::Sample);
                }
            }
        }
        if self.settings.record_final {
            self.now = end;
            self.record_final();
        }
        self.check_invariants().map_err(|e| format!("invariant violated: {e}"))?;
        Ok(self.out)
    }

    /// Control packets are conserved, backlogs are non-negative, finite sessions sent no more
    /// than their size, and every link task is consistent.
    fn check_invariants(&self) -> Result<(), String> {
        let live = (self.pkts.len() - self.free.len()) as u64;
        let (made, gone) = (self.created, self.consumed);
        if made != gone + live {
            return Err(format!("control packets: {made} created, {gone} consumed, {live} in flight"));
        }
        for (l, f) in self.fluid.iter().enumerate() {
            if !(f.queue >= 0.0 && f.input >= 0.0) {
                return Err(format!("link {l}: backlog {} bits, input {} bit/s", f.queue, f.input));
            }
        }
        for (s, st) in self.state.iter().enumerate() {
            if let Some(size) = self.sessions.size_bits[s] {
                if st.sent_bits > size * (1.0 + 1e-9) + 1.0 {
                    return Err(format!("session {s}: sent {} bits of {size}", st.sent_bits));
                }
            }
        }
        for (l, t) in self.tasks.iter().enumerate() {
            t.check().map_err(|e| format!("link {l}: {e}"))?;
        }
        Ok(())
    }

    fn start(&mut self, s: usize) {
        let mut src = P::new_source(&self.params, s as u32);
        src.join(self.now, self.sessions.demand[s]);
        self.sources[s] = Some(src);
        let st = &mut self.state[s];
        st.present = true;
        st.sending = true;
        st.since = self.now;
        self.membership += 1;
        self.after_source(s);
    }

    /// API.Leave: the session stops sending data at once and leaves the max-min problem; its
    /// source keeps running until its Leave packet is out.
    fn stop(&mut self, s: usize) {
        if !self.state[s].present {
            return;
        }
        self.state[s].present = false;
        self.state[s].sending = false;
        self.membership += 1;
        if let Some(src) = self.sources[s].as_mut() {
            src.leave(self.now);
        }
        self.after_source(s);
    }

    fn finish_data(&mut self, s: usize) {
        let c = &mut self.out.completions;
        c.session.push(s as u32);
        c.size_bits.push(self.sessions.size_bits[s].unwrap_or(f64::NAN));
        c.start_s.push(self.sessions.start[s].as_secs_f64());
        c.finish_s.push(self.now.as_secs_f64());
        self.stop(s);
    }

    /// After any input to a source: send what it has, follow its rate, arm its wake-up.
    fn after_source(&mut self, s: usize) {
        let now = self.now;
        loop {
            let Some(src) = self.sources[s].as_mut() else { return };
            match src.poll_transmit(now) {
                Some(body) => {
                    let k = self.alloc(Ctrl { session: s as u32, pos: 0, dir: Direction::Downstream, body });
                    self.out.stats.control_packets += 1;
                    self.control(k);
                }
                None => break,
            }
        }
        let src = self.sources[s].as_ref().expect("source present");
        let rate = src.rate();
        let wake = src.next_wakeup();
        let finished = src.is_finished();
        let st = &self.state[s];
        let want = if st.sending { rate.unwrap_or(0.0) * self.settings.data_share } else { 0.0 };
        if want != st.data_rate {
            self.set_data_rate(s, want);
        }
        if let Some(t) = wake {
            if t > now && self.state[s].wake_at != Some(t) {
                self.state[s].wake_at = Some(t);
                self.push(t, Ev::Wake(s as u32));
            }
        }
        if finished {
            self.sources[s] = None;
        }
    }

    fn set_data_rate(&mut self, s: usize, rate: f64) {
        let now = self.now;
        let old = self.state[s].data_rate;
        for &l in self.paths.path(s) {
            self.fluid[l as usize].add_input(now, rate - old);
        }
        let st = &mut self.state[s];
        st.sent_bits += old * (now - st.since).as_secs_f64();
        st.since = now;
        st.data_rate = rate;
        if let (Some(size), true) = (self.sessions.size_bits[s], st.sending) {
            st.done_version += 1;
            let v = st.done_version;
            if rate > 0.0 {
                let left = (size - st.sent_bits).max(0.0);
                let t = now + Dur::from_secs_f64(left / rate);
                self.push(t, Ev::Done(s as u32, v));
            }
        }
    }

    fn alloc(&mut self, c: Ctrl<P::Packet>) -> u32 {
        self.created += 1;
        match self.free.pop() {
            Some(k) => {
                self.pkts[k as usize] = Some(c);
                k
            }
            None => {
                self.pkts.push(Some(c));
                (self.pkts.len() - 1) as u32
            }
        }
    }

    /// Control packet `k` is at its position: the link task there runs, then the packet crosses
    /// the next link (downstream: link `pos`; upstream: the reverse of link `pos - 1`).
    fn control(&mut self, k: u32) {
        let now = self.now;
        let mut c = self.pkts[k as usize].take().expect("live packet");
        let s = c.session as usize;
        let start = self.paths.start[s] as usize;
        let len = self.paths.start[s + 1] as usize - start;
        let pos = c.pos as usize;
        if c.dir == Direction::Downstream && pos == len {
            self.free.push(k);
            self.consumed += 1;
            if let Some(body) = c.body.at_destination() {
                let l = self.paths.links[start + len - 1];
                let back = self.links.reverse[l as usize];
                let t = self.fluid[back as usize].traverse(now, body.wire_bytes() as f64 * 8.0);
                self.out.stats.control_hops += 1;
                let k = self.alloc(Ctrl { session: s as u32, pos: (len - 1) as u16, dir: Direction::Upstream, body });
                self.push(t, Ev::Ctrl(k));
            }
            return;
        }
        let l = self.paths.links[start + pos];
        let hop = Hop { session: s as u32, link: l, index: pos as u16, path_len: len as u16, dir: c.dir };
        if self.tasks[l as usize].on_packet(now, hop, &mut c.body) == Forward::Drop {
            self.free.push(k);
            self.consumed += 1;
            return;
        }
        let bits = c.body.wire_bytes() as f64 * 8.0;
        let next = match c.dir {
            Direction::Downstream => {
                c.pos += 1;
                l
            }
            Direction::Upstream if pos == 0 => {
                self.free.push(k);
                self.consumed += 1;
                if let Some(src) = self.sources[s].as_mut() {
                    src.on_packet(now, c.body);
                    self.after_source(s);
                }
                return;
            }
            Direction::Upstream => {
                c.pos -= 1;
                self.links.reverse[self.paths.links[start + pos - 1] as usize]
            }
        };
        let t = self.fluid[next as usize].traverse(now, bits);
        self.out.stats.control_hops += 1;
        self.pkts[k as usize] = Some(c);
        self.push(t, Ev::Ctrl(k));
    }

    fn tick(&mut self) {
        let Some(d) = self.tick else { return };
        let now = self.now;
        let interval = now - self.last_tick;
        self.last_tick = now;
        for l in 0..self.tasks.len() {
            let f = &mut self.fluid[l];
            f.advance(now);
            let bits = f.take_input();
            let load = LinkLoad { input_rate: bits / interval.as_secs_f64().max(1e-12), queue_bits: f.queue, interval };
            self.tasks[l].on_tick(now, &load);
        }
        self.push(now + d, Ev::Tick);
    }

    /// Present sessions and their max-min rates (recomputed only when membership changed).
    fn maxmin(&mut self) -> (Vec<u32>, Allocation) {
        if let Some((v, present, alloc)) = &self.oracle {
            if *v == self.membership {
                return (present.clone(), alloc.clone());
            }
        }
        let present: Vec<u32> = (0..self.state.len() as u32).filter(|&s| self.state[s as usize].present).collect();
        let problem = MaxMinProblem {
            capacity: self.links.capacity.clone(),
            paths: present.iter().map(|&s| self.paths.path(s as usize).to_vec()).collect(),
            demand: present.iter().map(|&s| self.sessions.demand[s as usize]).collect(),
        };
        let wall = std::time::Instant::now();
        let alloc = max_min_fair(&problem).expect("valid max-min problem");
        self.out.stats.oracle_wall_s += wall.elapsed().as_secs_f64();
        self.out.stats.oracle_runs += 1;
        self.oracle = Some((self.membership, present.clone(), alloc.clone()));
        (present, alloc)
    }

    fn assigned(&self, s: usize) -> Option<f64> {
        self.sources[s].as_ref().and_then(|src| src.rate())
    }

    fn sample(&mut self) {
        let now = self.now;
        let (present, alloc) = self.maxmin();
        let mut es = Vec::with_capacity(present.len());
        let mut load = vec![0.0; self.links.len()];
        for (i, &s) in present.iter().enumerate() {
            if let Some(r) = self.assigned(s as usize) {
                let exact = alloc.rate[i];
                if exact > 0.0 && exact.is_finite() {
                    es.push((r - exact) / exact * 100.0);
                }
                for &l in self.paths.path(s as usize) {
                    load[l as usize] += r;
                }
            }
        }
        let mut is_bottleneck = vec![false; self.links.len()];
        for b in &alloc.bottleneck {
            if let Bottleneck::Link(l) = b {
                is_bottleneck[*l as usize] = true;
            }
        }
        let mut ee: Vec<f64> = (0..self.links.len())
            .filter(|&l| is_bottleneck[l])
            .map(|l| (load[l] - self.links.capacity[l]) / self.links.capacity[l] * 100.0)
            .collect();
        // Resynchronise the fluid inputs with the sessions (float sums drift over many updates).
        let mut input = vec![0.0; self.links.len()];
        for s in 0..self.state.len() {
            let r = self.state[s].data_rate;
            if r > 0.0 {
                for &l in self.paths.path(s) {
                    input[l as usize] += r;
                }
            }
        }
        let (mut qmax, mut qcap, mut dmax) = (0.0f64, f64::NAN, 0.0f64);
        for (l, f) in self.fluid.iter_mut().enumerate() {
            f.advance(now);
            f.input = input[l];
            let m = f.take_max();
            if m > qmax {
                qmax = m;
                qcap = f.capacity;
            }
            dmax = dmax.max(m / f.capacity);
        }
        let t = &mut self.out.samples;
        t.time_s.push(now.as_secs_f64());
        t.present.push(present.len() as u64);
        t.rated.push(es.len() as u64);
        let (m, p10, p90) = mean_p10_p90(&mut es);
        t.es_mean.push(m);
        t.es_p10.push(p10);
        t.es_p90.push(p90);
        t.bottlenecks.push(ee.len() as u64);
        let (m, p10, p90) = mean_p10_p90(&mut ee);
        t.ee_mean.push(m);
        t.ee_p10.push(p10);
        t.ee_p90.push(p90);
        t.ee_max.push(ee.last().copied().unwrap_or(f64::NAN));
        t.max_queue_bits.push(qmax);
        t.max_queue_capacity.push(qcap);
        t.max_queue_delay_s.push(dmax);
    }

    fn record_final(&mut self) {
        let (present, alloc) = self.maxmin();
        for (i, &s) in present.iter().enumerate() {
            let f = &mut self.out.finals;
            f.session.push(s);
            f.rate_bps.push(self.sources[s as usize].as_ref().and_then(|x| x.rate()).unwrap_or(f64::NAN));
            f.maxmin_bps.push(alloc.rate[i]);
        }
    }
}
