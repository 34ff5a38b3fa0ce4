//! The hosts' traffic of a run, per stack: Linux TCP flows and transactions and CBR sources in
//! threads of their own, started at time zero (each sleeps until its start); seed 004's
//! sessions in one thread; flows on xcclab's UDP transport driven by the calling thread until
//! the end of the run ([`Traffic::run_to_end`]).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use xcc_build::scenario::model::{Cc, FlowKind, Scenario};
use xcc_core::{Dur, Time};

use crate::hosts::sessions as session_hosts;

use crate::hosts::udp_transport::{self, FlowSetup, TransportRun};
use crate::hosts::{apps, cbr};
use crate::os::netns::HostNs;
use crate::os::signals::STOP;
use crate::os::sys;
use crate::run::host_settings::linux_mss;
use crate::run::outcome::TxnOut;
use crate::run::paths::Paths;
use crate::run::plan::Plan;
use crate::run::stack::Stack;
use xcc_build::network::SessionGroups;

/// How long after the run's end a Linux TCP flow's sink keeps reading without seeing the end of
/// the connection (a sized transfer's last bytes, or the reset of an unlimited one).
const SINK_GRACE: Duration = Duration::from_secs(5);

/// Fine samples, so that each metrics interval's end falls within 10 ms of one.
const SAMPLE: Dur = Dur(10_000_000);

/// The run's clock: time zero as an `Instant` and as `CLOCK_MONOTONIC` ns, and its length.
#[derive(Clone, Copy)]
pub struct Clock {
    pub t0: Instant,
    pub zero_ns: u64,
    pub duration: Duration,
}

/// A bulk flow on Linux TCP: its receiving and its sending thread.
pub struct TcpFlow {
    pub flow: usize,
    pub start_ns: u64,
    pub sink: JoinHandle<io::Result<apps::SinkReport>>,
    pub sender: JoinHandle<io::Result<apps::BulkReport>>,
}

/// What a CBR sink received: bytes, and (time s, cumulative bytes) samples.
pub type CbrReceived = (u64, Vec<(f64, u64)>);

/// A CBR source and its sink.
pub struct CbrFlow {
    pub flow: usize,
    pub sink: JoinHandle<io::Result<CbrReceived>>,
    pub sender: JoinHandle<io::Result<u64>>,
}

/// One transaction's client on Linux TCP: (response time, completion time) from its start.
pub struct TcpTransaction {
    pub txn: usize,
    pub client: JoinHandle<io::Result<(Option<f64>, Option<f64>)>>,
}

/// Everything started for a run's traffic.
#[derive(Default)]
pub struct Traffic {
    pub tcp_flows: Vec<TcpFlow>,
    pub cbr_flows: Vec<CbrFlow>,
    /// Flows (and transactions' request and response flows) for xcclab's UDP transport.
    pub udp_setups: Vec<FlowSetup>,
    /// Every transaction, in the order of the `transactions` table.
    pub txns: Vec<TxnOut>,
    pub tcp_txns: Vec<TcpTransaction>,
    /// Linux TCP transaction servers (they end with their last client, or with the namespaces).
    pub tcp_txn_servers: Vec<JoinHandle<io::Result<()>>>,
    pub sessions: Option<JoinHandle<io::Result<session_hosts::SessionRun>>>,
}

fn addr(a: [u8; 4], port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(a), port))
}

impl Traffic {
    /// Starts the flows, the transactions and the sessions of `s` on the plan's hosts (MaxNet
    /// on `stack`); the CBR sinks end when `cbr_stop` is raised.
    pub fn start(
        s: &Scenario,
        stack: Stack,
        plan: &Plan,
        paths: &Paths,
        clock: Clock,
        cbr_stop: &Arc<AtomicBool>,
    ) -> io::Result<Traffic> {
        let mut traffic = Traffic::default();
        traffic.start_flows(s, stack, &plan.hosts, paths, clock, cbr_stop)?;
        traffic.start_transactions(s, stack, plan, paths, clock)?;
        traffic.start_sessions(s, &plan.hosts, paths, clock);
        Ok(traffic)
    }

    /// Bulk flows (Linux TCP, or xcclab's transport for explicit protocols) and CBR sources.
    fn start_flows(
        &mut self,
        s: &Scenario,
        stack: Stack,
        hosts: &[HostNs],
        paths: &Paths,
        clock: Clock,
        cbr_stop: &Arc<AtomicBool>,
    ) -> io::Result<()> {
        let Clock { t0, duration, .. } = clock;
        for (i, f) in s.flows.iter().enumerate() {
            if let FlowKind::Cbr { rate_bps, packet_bytes } = f.kind {
                let (a, b) = paths.flow_ports[i];
                let port = 30000 + i as u16;
                let rx = sys::in_netns(&hosts[b].path(), || UdpSocket::bind(addr(hosts[b].addr, port)))?;
                let tx = sys::in_netns(&hosts[a].path(), || UdpSocket::bind(addr(hosts[a].addr, 0)))?;
                let to = addr(hosts[b].addr, port);
                let (start, stop_at) = (
                    Duration::from_nanos(f.start_ns),
                    f.stop_ns.map_or(duration, |n| Duration::from_nanos(n).min(duration)),
                );
                let stop_sink = cbr_stop.clone();
                let sink = thread::spawn(move || cbr::sink(rx, t0, stop_sink));
                let sender = thread::spawn(move || cbr::send(tx, to, rate_bps, packet_bytes, t0, start, stop_at));
                self.cbr_flows.push(CbrFlow { flow: i, sink, sender });
                continue;
            }
            let FlowKind::Bulk { size_bytes, cc, transport } = f.kind else { continue };
            let (a, b) = paths.flow_ports[i];
            match cc.linux_tcp(stack == Stack::Kernel) {
                Some(linux_cc) => {
                    let port = 20000 + i as u16;
                    let listener = sys::in_netns(&hosts[b].path(), || TcpListener::bind(addr(hosts[b].addr, port)))?;
                    if matches!(cc, Cc::Dctcp(_)) {
                        // DCTCP's receiver echoes CE per packet (its accepted socket inherits this).
                        apps::set_tcp_congestion(&listener, linux_cc)?;
                    }
                    let (src_ns, dst) = (hosts[a].path(), addr(hosts[b].addr, port));
                    let start = Duration::from_nanos(f.start_ns);
                    let stop_at = f.stop_ns.map_or(duration, |n| Duration::from_nanos(n).min(duration));
                    let mss = linux_mss(&transport);
                    // Bounded: a reset lost at a full buffer must not hold the run (apps.rs).
                    let give_up_at = t0 + duration + SINK_GRACE;
                    let sink = thread::spawn(move || apps::tcp_sink_until(listener, Some(give_up_at)));
                    let sender = thread::spawn(move || -> io::Result<apps::BulkReport> {
                        if !apps::sleep_until(t0 + start) {
                            return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped"));
                        }
                        // The congestion control (and MSS) are the socket's from the SYN on.
                        let stream = sys::in_netns(&src_ns, || apps::tcp_connect_opts(dst, linux_cc, mss))?;
                        apps::tcp_send(stream, stop_at.saturating_sub(t0.elapsed()), size_bytes)
                    });
                    self.tcp_flows.push(TcpFlow { flow: i, start_ns: f.start_ns, sink, sender });
                }
                None => self.udp_setups.push(FlowSetup {
                    id: i as u32,
                    src_netns: hosts[a].path(),
                    dst_netns: hosts[b].path(),
                    src_addr: hosts[a].addr,
                    dst_addr: hosts[b].addr,
                    cc,
                    transport,
                    size_bytes,
                    start: Time(f.start_ns),
                    stop: f.stop_ns.map(Time),
                    two_way_delay: Dur(paths.two_way[i]),
                    then: None,
                }),
            }
        }
        Ok(())
    }

    /// Transactions: evenly spaced over [start, stop) as in the simulator. Explicit protocols
    /// run a request flow then a response flow on the UDP transport; NewReno uses one Linux
    /// TCP connection per transaction, opened at the start of the run so that, as in the
    /// simulator, the response time does not include a handshake.
    fn start_transactions(
        &mut self,
        s: &Scenario,
        stack: Stack,
        plan: &Plan,
        paths: &Paths,
        clock: Clock,
    ) -> io::Result<()> {
        let hosts = &plan.hosts;
        let n_flows = s.flows.len();
        let deadline = clock.t0 + clock.duration;
        for (g, t) in s.transactions.iter().enumerate() {
            let (c, sv) = (plan.port_of(t.client).unwrap(), plan.port_of(t.server).unwrap());
            let rtt = paths.route_delay(c, sv) + paths.route_delay(sv, c);
            let port = 30000 + g as u16;
            // Kernel MaxNet (--stack kernel): Linux TCP with the BPF `maxnet` congestion control.
            let txn_cc = t.cc.linux_tcp(stack == Stack::Kernel);
            let tcp = txn_cc.is_some();
            if tcp && t.count > 0 {
                let listener = sys::in_netns(&hosts[sv].path(), || TcpListener::bind(addr(hosts[sv].addr, port)))?;
                // The server sends the responses: its accepted sockets inherit the listener's.
                apps::set_tcp_congestion(&listener, txn_cc.unwrap_or("reno"))?;
                if let Some(m) = linux_mss(&t.transport) {
                    apps::set_tcp_mss(&listener, m)?;
                }
                let (count, rq, rs) = (t.count as usize, t.request_bytes, t.response_bytes);
                self.tcp_txn_servers.push(thread::spawn(move || apps::tcp_txn_server(listener, count, rq, rs)));
            }
            for k in 0..t.count as u64 {
                let at = t.start_ns + (t.stop_ns - t.start_ns) * k / t.count as u64;
                let idx = self.txns.len();
                self.txns.push(TxnOut { group: g, start_ns: at, response_s: f64::NAN, completion_s: f64::NAN });
                if tcp {
                    let (cns, dst) = (hosts[c].path(), addr(hosts[sv].addr, port));
                    let (rq, rs) = (t.request_bytes, t.response_bytes);
                    let at = clock.t0 + Duration::from_nanos(at);
                    let handshake = t.opens_connection(k as u32);
                    let mss = linux_mss(&t.transport);
                    let client = thread::spawn(move || -> io::Result<(Option<f64>, Option<f64>)> {
                        // One connection per transaction (HTTP/1.0), opened at its start time
                        // with `connection = "handshake"`, else ahead of it.
                        let connect = || -> io::Result<TcpStream> {
                            let cc = txn_cc.unwrap_or("reno");
                            let stream = sys::in_netns(&cns, || apps::tcp_connect_opts(dst, cc, mss))?;
                            stream.set_nodelay(true)?;
                            Ok(stream)
                        };
                        apps::tcp_txn_client(connect, handshake, at, deadline, rq, rs)
                    });
                    self.tcp_txns.push(TcpTransaction { txn: idx, client });
                } else {
                    let id = (n_flows + 2 * idx) as u32;
                    let base = self.udp_setups.len();
                    let mk = |id: u32, a: usize, b: usize, size: u64, start: Time, then: Option<usize>| FlowSetup {
                        id,
                        src_netns: hosts[a].path(),
                        dst_netns: hosts[b].path(),
                        src_addr: hosts[a].addr,
                        dst_addr: hosts[b].addr,
                        cc: t.cc,
                        transport: t.transport,
                        size_bytes: Some(size),
                        start,
                        stop: None,
                        two_way_delay: Dur(rtt),
                        then,
                    };
                    let mut req = mk(id, c, sv, t.request_bytes, Time(at), Some(base + 1));
                    req.transport.handshake = t.opens_connection(k as u32);
                    self.udp_setups.push(req);
                    // The response travels on the connection the request opened: no SYN of its own.
                    let mut resp = mk(id + 1, sv, c, t.response_bytes, Time::NEVER, None);
                    resp.transport.handshake = false;
                    self.udp_setups.push(resp);
                }
            }
        }
        Ok(())
    }

    /// Seed 004's sessions: their sources and destinations in a thread of their own.
    fn start_sessions(&mut self, s: &Scenario, hosts: &[HostNs], paths: &Paths, clock: Clock) {
        let ids = SessionGroups::of(s);
        let mut session_setups = Vec::new();
        for (i, f) in s.flows.iter().enumerate() {
            let (FlowKind::Session { size_bytes, demand_bps, packet_bytes, .. }, Some((group, local))) =
                (f.kind, ids.of_flow[i])
            else {
                continue;
            };
            let (a, b) = paths.flow_ports[i];
            session_setups.push(session_hosts::SessionSetup {
                flow: i,
                group: group as usize,
                local,
                src_netns: hosts[a].path(),
                dst_netns: hosts[b].path(),
                src_addr: hosts[a].addr,
                dst_addr: hosts[b].addr,
                demand: demand_bps.map_or(f64::INFINITY, |d| d as f64),
                packet_bytes,
                size_bytes,
                start: Time(f.start_ns),
                stop: f.stop_ns.map(Time),
            });
        }
        self.sessions = (!session_setups.is_empty()).then(|| {
            let groups = ids
                .protocols
                .iter()
                .zip(&ids.counts)
                .map(|(p, &n)| session_hosts::source_group(p, n as usize))
                .collect();
            let until = Time(s.duration_ns);
            let zero_ns = clock.zero_ns;
            thread::spawn(move || session_hosts::run(session_setups, groups, zero_ns, until, SAMPLE))
        });
    }

    /// Runs until the end of the run or a stop: xcclab's transport drives its flows in this
    /// thread (`None` when there were none; then this waits, waking every 50 ms for Ctrl-C).
    pub fn run_to_end(&mut self, s: &Scenario, clock: Clock) -> Option<io::Result<TransportRun>> {
        if self.udp_setups.is_empty() {
            let Clock { t0, duration, .. } = clock;
            while t0.elapsed() < duration && !STOP.load(Ordering::Relaxed) {
                thread::sleep(duration.saturating_sub(t0.elapsed()).min(Duration::from_millis(50)));
            }
            return None;
        }
        let setups = std::mem::take(&mut self.udp_setups);
        Some(udp_transport::run(setups, clock.zero_ns, Time(s.duration_ns), SAMPLE))
    }
}
