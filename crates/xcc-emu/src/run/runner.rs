//! `xcc-emu run`: a whole scenario on real packets. Namespaces for the hosts, the router in
//! its own thread, NewReno flows on Linux TCP sockets, explicit protocols on xcclab's UDP
//! transport, and the results in the simulator's table layout (`{table: {column: [values]}}`),
//! so the Python side stores them as the same Parquet files.
//!
//! Everything made is removed at the end, on error and on SIGINT/SIGTERM (the flows stop, the
//! router stops, the namespaces go); `xcc-emu cleanup` removes what a killed run left.

use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use xcc_build::scenario::model::{Cc, FlowKind, Scenario, Transport};
use xcc_core::{Dur, Time};

use crate::hosts::apps;
use crate::hosts::sessions as session_hosts;
use crate::hosts::udp_transport::{self, FlowSetup};
use crate::os::netns::{self, DevCounters, Topology};
use crate::os::signals::STOP;
use crate::os::sys;
use crate::router::event_loop::Router;
use crate::router::fabric::FabricStats;
use crate::run::plan::Plan;
pub use crate::run::stack::Stack;

/// What one emulated run produced.
pub struct EmuOutput {
    /// `{"tables": {...}, "stats": {...}, "resolved": ...}` like the simulator's native output.
    pub json: Value,
    pub router: FabricStats,
    pub kernel: Vec<DevCounters>,
}

/// Per-flow outcome, whichever stack carried it.
#[derive(Default, Clone)]
struct FlowOut {
    bytes_sent: u64,
    bytes_delivered: u64,
    fct_s: f64,
    retransmits: u64,
    timeouts: u64,
    ce_received: u64,
    min_rtt_s: f64,
    srtt_s: f64,
    /// (time s, cumulative delivered bytes, srtt s or NaN)
    samples: Vec<(f64, u64, f64)>,
}

fn addr(a: [u8; 4], port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(a), port))
}

/// The MSS a Linux TCP socket is capped at: the scenario's, when below the route's 1460 B.
fn linux_mss(t: &Transport) -> Option<u32> {
    (t.mss_bytes < ROUTE_MSS).then_some(t.mss_bytes)
}

/// Linux TCP's MSS on the namespaces' route (1500 - 40).
const ROUTE_MSS: u32 = netns::ROUTE_MTU - 40;

/// What Linux TCP flows' `transport` and NewReno's `initial_window` ask of their hosts, set
/// where Linux has a knob: `sack = false` turns SACK off on both ends' namespaces; a NewReno
/// flow's `initial_window` is its sender's route `initcwnd` (both ends of a transaction, the
/// server sends the response); `delayed_ack = false` (the simulator's default, ns-2's sink)
/// sets `quickack` on the receiver's route, while `delayed_ack = "linux"` or a time leaves
/// Linux's delayed ACKs. A host whose flows disagree gets SACK off, quick ACKs and the largest
/// window. Kernel MaxNet's flows keep Linux's defaults (their window is the price's).
fn linux_tcp_settings(s: &Scenario, plan: &mut Plan, stack: Stack) {
    let mut ends: Vec<(Cc, Transport, Vec<usize>, Vec<usize>)> = Vec::new();
    for f in &s.flows {
        if let FlowKind::Bulk { cc, transport, .. } = f.kind {
            let (a, b) = (plan.port_of(f.src).unwrap(), plan.port_of(f.dst).unwrap());
            ends.push((cc, transport, vec![a], vec![b]));
        }
    }
    for t in &s.transactions {
        let (c, sv) = (plan.port_of(t.client).unwrap(), plan.port_of(t.server).unwrap());
        ends.push((t.cc, t.transport, vec![c, sv], vec![c, sv]));
    }
    for (cc, transport, senders, receivers) in ends {
        if cc.linux_tcp(stack == Stack::Kernel).is_none() {
            continue;
        }
        if !transport.sack {
            for &h in senders.iter().chain(&receivers) {
                plan.hosts[h].tcp_sack = false;
            }
        }
        let Cc::NewReno(p) = cc else { continue };
        for &h in &senders {
            let w = &mut plan.hosts[h].initcwnd;
            *w = Some(w.unwrap_or(0).max(p.initial_window));
        }
        if transport.delayed_ack_ns.is_none() {
            for &h in &receivers {
                plan.hosts[h].quickack = true;
            }
        }
    }
}

/// Runs scenario `s`; fails with a clear message when the machine cannot (not root, no TUN),
/// when the scenario asks for traffic the emulator does not carry yet, or when the kernel
/// dropped packets at a TUN device (the run would not mean what it says).
pub fn emulate(s: &Scenario) -> io::Result<EmuOutput> {
    emulate_on(s, Stack::Udp)
}

/// [`emulate`] with MaxNet flows on the given stack.
pub fn emulate_on(s: &Scenario, stack: Stack) -> io::Result<EmuOutput> {
    let header_bytes = crate::run::preflight::check(s, stack)?;
    let prefix = netns::run_prefix();
    let mut plan = Plan::new(s, &prefix, "reno");
    plan.fabric.carriers = crate::router::carrier::Carriers::with_modelled_header(header_bytes);
    let ecn_hosts: Vec<bool> = (0..plan.hosts.len())
        .map(|h| {
            s.flows.iter().any(|f| {
                plan.port_of(f.src) == Some(h) && matches!(f.kind, FlowKind::Bulk { transport, .. } if transport.ecn)
            }) || s
                .transactions
                .iter()
                .any(|t| t.transport.ecn && (plan.port_of(t.client) == Some(h) || plan.port_of(t.server) == Some(h)))
        })
        .collect();
    for (h, ecn) in plan.hosts.iter_mut().zip(&ecn_hosts) {
        // A host whose flows do not ask for ECN only answers ECN (2), as Linux does by default.
        h.tcp_ecn = if *ecn { 1 } else { 2 };
    }
    linux_tcp_settings(s, &mut plan, stack);
    let hosts = plan.hosts.clone();
    let mut topo = Topology::create(hosts.clone())?;
    let att = plan.attachments();
    let delay_of = |r: &[u32]| -> u64 { r.iter().map(|&l| s.links[l as usize].delay_ns).sum() };
    // One-way propagation delay between every pair of hosts (before the fabric moves away).
    let n_hosts = plan.hosts.len();
    let delays: Vec<u64> =
        (0..n_hosts * n_hosts).map(|k| plan.fabric.route(k / n_hosts, k % n_hosts).map_or(0, &delay_of)).collect();
    let route_delay = |a: usize, b: usize| -> u64 { delays[a * n_hosts + b] };
    let flow_ports: Vec<(usize, usize)> =
        s.flows.iter().map(|f| (plan.port_of(f.src).unwrap(), plan.port_of(f.dst).unwrap())).collect();
    let two_way: Vec<u64> = flow_ports.iter().map(|&(a, b)| route_delay(a, b) + route_delay(b, a)).collect();
    let fabric = std::mem::replace(&mut plan.fabric, crate::router::fabric::Fabric::empty());
    let interval = s.metrics.interval_ns;

    let stop = Arc::new(AtomicBool::new(false));
    let stop_r = stop.clone();
    let (attached_tx, attached_rx) = std::sync::mpsc::channel::<()>();
    let (zero_tx, zero_rx) = std::sync::mpsc::channel::<u64>();
    let router = thread::spawn(move || -> io::Result<Router> {
        let mut r = Router::open(fabric, &att)?;
        r.sample_every = (interval > 0).then_some(interval);
        let _ = attached_tx.send(());
        // The run's time zero is when the traffic starts, so the links' series and the flows'
        // share one clock (as in the simulator).
        if let Ok(zero) = zero_rx.recv() {
            r.t0_ns = zero;
        }
        r.run(&stop_r, None)?;
        Ok(r)
    });
    // The router attaches to every namespace's TUN before the traffic starts.
    if attached_rx.recv().is_err() {
        return match router.join() {
            Ok(Err(e)) => Err(e),
            _ => Err(io::Error::other("the router thread ended before attaching")),
        };
    }
    // Count drops from here on only: the run's traffic starts now, and a packet the kernel sent
    // on its own before is not the run's.
    netns::wait_until_running(&hosts, Duration::from_secs(2));
    if STOP.load(Ordering::Relaxed) {
        // Stopped while setting up: nothing has started; the router goes (it waits for time
        // zero, which never comes: the channel closes), then the namespaces.
        stop.store(true, Ordering::Relaxed);
        drop(zero_tx);
        let _ = router.join();
        topo.destroy()?;
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    let kernel_before: Vec<DevCounters> =
        hosts.iter().map(|h| netns::host_counters(&h.path(), netns::TUN_DEV).unwrap_or_default()).collect();
    // A halted vCPU wakes hundreds of microseconds late (docs/emu.md): keep the CPUs out of
    // deep idle for the run. XCC_EMU_KEEP_AWAKE=0 turns this off, =spin uses the spinners.
    let awake = match std::env::var("XCC_EMU_KEEP_AWAKE").as_deref() {
        Ok("0") => None,
        Ok("spin") => Some(sys::KeepAwake::spinners()),
        _ => Some(sys::KeepAwake::start()),
    };
    let keep_awake_method = awake.as_ref().map_or("off", |a| a.method());
    // No real-time throttling and a deep receive backlog while the run lasts (sysctl_lift.rs).
    let rt_throttling = crate::os::sysctl_lift::Lift::rt_throttling();
    let backlog = crate::os::sysctl_lift::Lift::receive_backlog();
    let t0 = Instant::now();
    let zero_ns = sys::monotonic_ns();
    let _ = zero_tx.send(zero_ns);
    let duration = Duration::from_nanos(s.duration_ns);

    let mut tcp_threads = Vec::new();
    let mut udp_setups = Vec::new();
    let mut cbr_threads = Vec::new();
    let cbr_stop = Arc::new(AtomicBool::new(false));
    // A stop (SIGINT, SIGTERM, SIGHUP) at any moment from here to the end: every Linux TCP
    // socket is reset and its thread woken, the CBR sinks told, so every join below returns
    // at once and no connection outlives the run (the signal handler itself may only set STOP).
    let run_over = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (over, cbr_stop) = (run_over.clone(), cbr_stop.clone());
        thread::spawn(move || {
            while !over.load(Ordering::Relaxed) {
                if STOP.load(Ordering::Relaxed) {
                    apps::abort_all();
                    cbr_stop.store(true, Ordering::Relaxed);
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
        })
    };
    for (i, f) in s.flows.iter().enumerate() {
        if let FlowKind::Cbr { rate_bps, packet_bytes } = f.kind {
            let (a, b) = flow_ports[i];
            let port = 30000 + i as u16;
            let rx = sys::in_netns(&hosts[b].path(), || std::net::UdpSocket::bind(addr(hosts[b].addr, port)))?;
            let tx = sys::in_netns(&hosts[a].path(), || std::net::UdpSocket::bind(addr(hosts[a].addr, 0)))?;
            let to = addr(hosts[b].addr, port);
            let (start, stop_at) = (
                Duration::from_nanos(f.start_ns),
                f.stop_ns.map_or(duration, |n| Duration::from_nanos(n).min(duration)),
            );
            let stop_sink = cbr_stop.clone();
            let sink = thread::spawn(move || crate::hosts::cbr::sink(rx, t0, stop_sink));
            let sender =
                thread::spawn(move || crate::hosts::cbr::send(tx, to, rate_bps, packet_bytes, t0, start, stop_at));
            cbr_threads.push((i, sink, sender));
            continue;
        }
        let FlowKind::Bulk { size_bytes, cc, transport } = f.kind else { continue };
        let (a, b) = flow_ports[i];
        match cc.linux_tcp(stack == Stack::Kernel) {
            Some(linux_cc) => {
                let port = 20000 + i as u16;
                let listener = sys::in_netns(&hosts[b].path(), || TcpListener::bind(addr(hosts[b].addr, port)))?;
                let (src_ns, dst) = (hosts[a].path(), addr(hosts[b].addr, port));
                let start = Duration::from_nanos(f.start_ns);
                let stop_at = f.stop_ns.map_or(duration, |n| Duration::from_nanos(n).min(duration));
                let mss = linux_mss(&transport);
                let sink = thread::spawn(move || apps::tcp_sink(listener));
                let sender = thread::spawn(move || -> io::Result<apps::BulkReport> {
                    if !apps::sleep_until(t0 + start) {
                        return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped"));
                    }
                    // The congestion control (and MSS) are the socket's from the SYN on.
                    let stream = sys::in_netns(&src_ns, || apps::tcp_connect_opts(dst, linux_cc, mss))?;
                    apps::tcp_send(stream, stop_at.saturating_sub(t0.elapsed()), size_bytes)
                });
                tcp_threads.push((i, f.start_ns, sink, sender));
            }
            None => udp_setups.push(FlowSetup {
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
                two_way_delay: Dur(two_way[i]),
                then: None,
            }),
        }
    }
    // Transactions: evenly spaced over [start, stop) as in the simulator. Explicit protocols
    // run a request flow then a response flow on the UDP transport; NewReno uses one Linux TCP
    // connection per transaction, opened at the start of the run so that, as in the
    // simulator, the response time does not include a handshake.
    let n_flows = s.flows.len();
    let mut txns: Vec<TxnOut> = Vec::new();
    let mut tcp_txn_threads = Vec::new();
    let mut tcp_txn_servers = Vec::new();
    let deadline = t0 + duration;
    for (g, t) in s.transactions.iter().enumerate() {
        let (c, sv) = (plan.port_of(t.client).unwrap(), plan.port_of(t.server).unwrap());
        let rtt = route_delay(c, sv) + route_delay(sv, c);
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
            tcp_txn_servers.push(thread::spawn(move || apps::tcp_txn_server(listener, count, rq, rs)));
        }
        for k in 0..t.count as u64 {
            let at = t.start_ns + (t.stop_ns - t.start_ns) * k / t.count as u64;
            let idx = txns.len();
            txns.push(TxnOut { group: g, start_ns: at, response_s: f64::NAN, completion_s: f64::NAN });
            if tcp {
                let (cns, dst) = (hosts[c].path(), addr(hosts[sv].addr, port));
                let (rq, rs) = (t.request_bytes, t.response_bytes);
                let at = t0 + Duration::from_nanos(at);
                let handshake = t.opens_connection(k as u32);
                let mss = linux_mss(&t.transport);
                tcp_txn_threads.push((
                    idx,
                    thread::spawn(move || -> io::Result<(Option<f64>, Option<f64>)> {
                        // One connection per transaction (HTTP/1.0), opened at its start time
                        // with `connection = "handshake"`, else ahead of it.
                        let connect = || -> io::Result<TcpStream> {
                            let cc = txn_cc.unwrap_or("reno");
                            let stream = sys::in_netns(&cns, || apps::tcp_connect_opts(dst, cc, mss))?;
                            stream.set_nodelay(true)?;
                            Ok(stream)
                        };
                        apps::tcp_txn_client(connect, handshake, at, deadline, rq, rs)
                    }),
                ));
            } else {
                let id = (n_flows + 2 * idx) as u32;
                let base = udp_setups.len();
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
                udp_setups.push(req);
                // The response travels on the connection the request opened: no SYN of its own.
                let mut resp = mk(id + 1, sv, c, t.response_bytes, Time::NEVER, None);
                resp.transport.handshake = false;
                udp_setups.push(resp);
            }
        }
    }
    // Fine samples, so that each metrics interval's end falls within 10 ms of one.
    let sample = Dur(10_000_000);
    // Seed 004's sessions: their sources and destinations in a thread of their own.
    let ids = crate::run::plan::SessionIds::of(s);
    let mut session_setups = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        let (FlowKind::Session { size_bytes, demand_bps, packet_bytes, .. }, Some((group, local))) =
            (f.kind, ids.of_flow[i])
        else {
            continue;
        };
        let (a, b) = flow_ports[i];
        session_setups.push(session_hosts::SessionSetup {
            flow: i,
            group,
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
    let session_thread = (!session_setups.is_empty()).then(|| {
        let groups =
            ids.protocols.iter().zip(&ids.counts).map(|(p, &n)| session_hosts::source_group(p, n as usize)).collect();
        let until = Time(s.duration_ns);
        thread::spawn(move || session_hosts::run(session_setups, groups, zero_ns, until, sample))
    });
    let no_udp_flows = udp_setups.is_empty();
    let udp = if no_udp_flows {
        // Wait for the end of the run, or Ctrl-C.
        while t0.elapsed() < duration && !STOP.load(Ordering::Relaxed) {
            thread::sleep(duration.saturating_sub(t0.elapsed()).min(Duration::from_millis(50)));
        }
        Ok(udp_transport::TransportRun::default())
    } else {
        udp_transport::run(udp_setups, zero_ns, Time(s.duration_ns), sample)
    };
    let mut outs = vec![FlowOut::default(); s.flows.len() + 2 * txns.len()];
    let mut first_err = udp.as_ref().err().map(|e| io::Error::new(e.kind(), e.to_string()));
    // Datagrams the hosts' own UDP sockets refused: lost before the router, outside the model.
    let udp = udp.unwrap_or_default();
    let mut send_failures = udp.ack_send_failures;
    let (data_batches, ack_batches, reads) = (udp.data_batches, udp.ack_batches, udp.reads);
    let (host_wake_late_max_ns, hosts_realtime) = (udp.wake_late_max_ns, (!no_udp_flows).then_some(udp.realtime));
    for r in udp.flows {
        send_failures += r.send_failures;
        if r.id as usize >= n_flows {
            // A transaction's request or response flow.
            let k = (r.id as usize - n_flows) / 2;
            let start = txns[k].start_ns;
            if (r.id as usize - n_flows) % 2 == 1 {
                let since = |t: Time| t.as_ns().saturating_sub(start) as f64 * 1e-9;
                txns[k].response_s = r.first_byte_at.map_or(f64::NAN, since);
                txns[k].completion_s = r.received_all_at.map_or(f64::NAN, since);
            }
            let o = &mut outs[r.id as usize];
            o.bytes_delivered = r.bytes_delivered;
            o.retransmits = r.retransmits;
            o.timeouts = r.timeouts;
            let began = r.started_at.unwrap_or(Time(start));
            o.fct_s = r.received_all_at.map_or(f64::NAN, |t| t.as_ns().saturating_sub(began.as_ns()) as f64 * 1e-9);
            o.min_rtt_s = f64::NAN;
            o.srtt_s = f64::NAN;
            continue;
        }
        let o = &mut outs[r.id as usize];
        o.bytes_delivered = r.bytes_delivered;
        o.retransmits = r.retransmits;
        o.timeouts = r.timeouts;
        o.fct_s = match (s.flows[r.id as usize].kind, r.completed_at) {
            (FlowKind::Bulk { size_bytes: Some(_), .. }, Some(t)) => {
                t.as_secs_f64() - s.flows[r.id as usize].start_ns as f64 * 1e-9
            }
            _ => f64::NAN,
        };
        o.samples = r.samples.iter().map(|&(t, b, _, srtt)| (t.as_secs_f64(), b, srtt as f64 * 1e-9)).collect();
        o.srtt_s = o.samples.last().map_or(f64::NAN, |x| x.2);
        o.min_rtt_s = f64::NAN;
    }
    let mut sessions_run = None;
    if let Some(h) = session_thread {
        match h.join().map_err(|_| io::Error::other("session thread panicked"))? {
            Ok(run) => {
                for r in &run.sessions {
                    let o = &mut outs[r.flow];
                    o.bytes_sent = r.bytes_sent;
                    o.bytes_delivered = r.bytes_delivered;
                    let start = s.flows[r.flow].start_ns;
                    o.fct_s = r.completed_at.map_or(f64::NAN, |t| t.as_ns().saturating_sub(start) as f64 * 1e-9);
                    o.samples = r.samples.iter().map(|&(t, b)| (t.as_secs_f64(), b, f64::NAN)).collect();
                    o.min_rtt_s = f64::NAN;
                    o.srtt_s = f64::NAN;
                }
                send_failures += run.send_failures;
                sessions_run = Some(run);
            }
            Err(e) => {
                first_err.get_or_insert(io::Error::new(e.kind(), format!("sessions: {e}")));
            }
        }
    }
    let had_tcp = !tcp_threads.is_empty();
    for (i, start_ns, sink, sender) in tcp_threads {
        let sent = sender.join().map_err(|_| io::Error::other("sender thread panicked"))?;
        let got = sink.join().map_err(|_| io::Error::other("sink thread panicked"))?;
        match (sent, got) {
            (Ok(sent), Ok(got)) => {
                let o = &mut outs[i];
                o.bytes_sent = sent.info.bytes_sent;
                // Only what arrived within the run (and before the flow's stop) counts.
                let off = start_ns as f64 * 1e-9;
                let end = s.flows[i].stop_ns.map_or(s.duration_ns, |n| n.min(s.duration_ns)) as f64 * 1e-9;
                let samples: Vec<(f64, u64, f64)> = got.samples.iter().map(|&(t, b)| (t + off, b, f64::NAN)).collect();
                o.bytes_delivered = bytes_at(&samples, end);
                o.retransmits = sent.info.total_retrans as u64;
                o.timeouts = sent.info.total_rto.map_or(0, u64::from);
                o.ce_received = sent.info.delivered_ce as u64;
                o.min_rtt_s = sent.info.min_rtt_us as f64 * 1e-6;
                o.srtt_s = sent.info.rtt_us as f64 * 1e-6;
                o.samples = samples;
                o.fct_s = match s.flows[i].kind {
                    FlowKind::Bulk { size_bytes: Some(n), .. } if got.bytes >= n => {
                        got.samples.last().map_or(f64::NAN, |x| x.0)
                    }
                    _ => f64::NAN,
                };
            }
            (Err(e), _) | (_, Err(e)) => {
                first_err.get_or_insert(io::Error::new(e.kind(), format!("flow {}: {e}", s.flows[i].name)));
            }
        }
    }
    for (i, sink, sender) in cbr_threads {
        let sent = sender.join().map_err(|_| io::Error::other("cbr sender panicked"))?;
        // The last datagrams are still on the links: give them the path's delay to arrive.
        if !STOP.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_nanos(two_way[i]) + Duration::from_millis(20));
        }
        cbr_stop.store(true, Ordering::Relaxed);
        let got = sink.join().map_err(|_| io::Error::other("cbr sink panicked"))?;
        match (sent, got) {
            (Ok(sent), Ok((bytes, samples))) => {
                let o = &mut outs[i];
                o.bytes_sent = sent;
                o.bytes_delivered = bytes;
                o.samples = samples.into_iter().map(|(t, b)| (t, b, f64::NAN)).collect();
                o.min_rtt_s = f64::NAN;
                o.srtt_s = f64::NAN;
                o.fct_s = f64::NAN;
            }
            (Err(e), _) | (_, Err(e)) => {
                first_err.get_or_insert(io::Error::new(e.kind(), format!("flow {}: {e}", s.flows[i].name)));
            }
        }
    }
    for (idx, h) in tcp_txn_threads {
        match h.join().map_err(|_| io::Error::other("transaction thread panicked"))? {
            Ok((first, done)) => {
                txns[idx].response_s = first.unwrap_or(f64::NAN);
                txns[idx].completion_s = done.unwrap_or(f64::NAN);
            }
            Err(e) => {
                first_err.get_or_insert(io::Error::new(e.kind(), format!("transaction {idx}: {e}")));
            }
        }
    }
    // Servers whose clients failed may still wait in accept(): they go with the namespaces.
    drop(tcp_txn_servers);
    // Let the last FIN/ACK exchanges cross the router before it stops: a socket left in
    // LAST_ACK retransmits into a dismantled namespace for minutes and keeps its congestion
    // control (kernel MaxNet's BPF map) alive that long.
    if had_tcp && !STOP.load(Ordering::Relaxed) {
        let longest = two_way.iter().copied().max().unwrap_or(0);
        thread::sleep(Duration::from_nanos(3 * longest) + Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    run_over.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    let router = router.join().map_err(|_| io::Error::other("router thread panicked"))?;
    drop(awake);
    let kernel: Vec<DevCounters> = hosts
        .iter()
        .zip(&kernel_before)
        .map(|(h, before)| netns::host_counters(&h.path(), netns::TUN_DEV).map(|c| c.since(before)))
        .collect::<io::Result<_>>()?;
    topo.destroy()?;
    let router = router?;
    if let Some(e) = first_err {
        return Err(e);
    }
    if STOP.load(Ordering::Relaxed) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    // Losses outside the modelled links make the results describe another network: fail.
    let tun: u64 = kernel.iter().map(|k| k.tx_dropped + k.rx_dropped).sum::<u64>() + router.fabric.stats.write_failures;
    if tun > 0 {
        return Err(io::Error::other(format!(
            "the kernel dropped {tun} packet(s) at the TUN devices (router too slow for this load): {kernel:?}"
        )));
    }
    let udp: u64 = kernel.iter().map(|k| k.udp_rcvbuf_errors + k.udp_sndbuf_errors).sum::<u64>() + send_failures;
    if udp > 0 {
        return Err(io::Error::other(format!(
            "the hosts' UDP sockets dropped {udp} datagram(s) (full receive buffer or refused send: the \
             transport driver too slow for this load; {send_failures} refused sends): {kernel:?}"
        )));
    }
    let mut json = tables(s, &plan, &router, &outs, &txns);
    // Zero in every run that gets here; recorded so that run.json says they were checked.
    json["stats"]["kernel_tun_tx_dropped"] = json!(kernel.iter().map(|k| k.tx_dropped).sum::<u64>());
    json["stats"]["kernel_tun_rx_dropped"] = json!(kernel.iter().map(|k| k.rx_dropped).sum::<u64>());
    json["stats"]["kernel_udp_rcvbuf_errors"] = json!(kernel.iter().map(|k| k.udp_rcvbuf_errors).sum::<u64>());
    json["stats"]["kernel_udp_sndbuf_errors"] = json!(kernel.iter().map(|k| k.udp_sndbuf_errors).sum::<u64>());
    // Stalls: how late the hosts' transport woke at worst (a host without a CPU sends nothing).
    json["stats"]["host_wake_late_max_us"] = json!(host_wake_late_max_ns / 1000);
    // Whether the router and the hosts' transport ran at real-time priority (refused without
    // CAP_SYS_NICE or an RLIMIT_RTPRIO; then other work on the machine can delay them).
    json["stats"]["router_realtime"] = json!(router.realtime);
    json["stats"]["tun_offload"] = json!(router.offload);
    // The router thread's share of a CPU: near 0.95 the kernel's real-time throttling stalls it.
    json["stats"]["router_cpu_share"] = json!(router.cpu_ns as f64 / (router.wall_ns as f64).max(1.0));
    json["stats"]["gro_writes"] = json!(router.coalesce.as_ref().map_or(0, |c| c.merged_writes));
    json["stats"]["gro_segments"] = json!(router.coalesce.as_ref().map_or(0, |c| c.merged_segments));
    json["stats"]["hosts_realtime"] = json!(hosts_realtime);
    // xcclab's transport: datagrams sent several to a system call (send_batch.rs).
    json["stats"]["transport_data_batches"] = json!(data_batches.0);
    json["stats"]["transport_data_batched"] = json!(data_batches.1);
    json["stats"]["transport_ack_batches"] = json!(ack_batches.0);
    json["stats"]["transport_acks_batched"] = json!(ack_batches.1);
    json["stats"]["transport_reads"] = json!(reads.0);
    json["stats"]["transport_datagrams_read"] = json!(reads.1);
    json["stats"]["keep_awake"] = json!(keep_awake_method);
    json["stats"]["rt_throttling_lifted"] = json!(rt_throttling.lifted());
    json["stats"]["receive_backlog_raised"] = json!(backlog.lifted());
    if let (Some(sr), Some(run)) = (router.fabric.sessions.as_ref(), sessions_run.as_ref()) {
        // Seed 004's sessions: control packets through the link tasks, and the hosts' side.
        let held = sr.check().map_err(io::Error::other)?;
        json["stats"]["session_control_read"] = json!(sr.stats.control_read);
        json["stats"]["session_control_absorbed"] = json!(sr.stats.control_absorbed);
        json["stats"]["session_control_in_router_at_end"] = json!(held);
        json["stats"]["session_data_read"] = json!(sr.stats.data_read);
        json["stats"]["session_malformed"] = json!(sr.stats.malformed);
        json["stats"]["session_control_sent"] = json!(run.sessions.iter().map(|r| r.control_sent).sum::<u64>());
        json["stats"]["session_control_back"] = json!(run.sessions.iter().map(|r| r.control_back).sum::<u64>());
        json["stats"]["session_unreadable"] = json!(run.unreadable);
        json["stats"]["session_wake_late_max_us"] = json!(run.wake_late_max_ns / 1000);
        let lost = run.sessions.iter().map(|r| r.pacing_lost_ns);
        json["stats"]["session_pacing_lost_max_us"] = json!(lost.clone().max().unwrap_or(0) / 1000);
        json["stats"]["session_pacing_lost_total_us"] = json!(lost.sum::<u64>() / 1000);
        json["stats"]["session_hosts_realtime"] = json!(run.realtime);
    }
    Ok(EmuOutput { json, router: router.fabric.stats.clone(), kernel })
}

/// One transaction's outcome (seconds from its start; NaN where it did not happen).
struct TxnOut {
    group: usize,
    start_ns: u64,
    response_s: f64,
    completion_s: f64,
}

fn tables(s: &Scenario, plan: &Plan, router: &Router, outs: &[FlowOut], txns: &[TxnOut]) -> Value {
    let node = |n: u32| s.nodes[n as usize].name.clone();
    let dur_s = s.duration_ns as f64 * 1e-9;
    let mut flows: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let push = |t: &mut BTreeMap<&'static str, Vec<Value>>, k: &'static str, v: Value| t.entry(k).or_default().push(v);
    for (i, f) in s.flows.iter().enumerate() {
        let o = &outs[i];
        let (cc, size) = match f.kind {
            FlowKind::Bulk { cc, size_bytes, .. } => (cc.name(), size_bytes.map_or(-1, |n| n as i64)),
            FlowKind::Cbr { .. } => ("none", -1),
            FlowKind::Session { protocol, size_bytes, .. } => (protocol.name(), size_bytes.map_or(-1, |n| n as i64)),
        };
        let start = f.start_ns as f64 * 1e-9;
        let end =
            if o.fct_s.is_finite() { start + o.fct_s } else { f.stop_ns.map_or(dur_s, |n| n as f64 * 1e-9).min(dur_s) };
        let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
        push(&mut flows, "flow_id", json!(i));
        push(&mut flows, "name", json!(f.name));
        let kind = match f.kind {
            FlowKind::Cbr { .. } => "cbr",
            FlowKind::Session { .. } => "session",
            FlowKind::Bulk { .. } => "bulk",
        };
        push(&mut flows, "kind", json!(kind));
        push(&mut flows, "src", json!(node(f.src)));
        push(&mut flows, "dst", json!(node(f.dst)));
        push(&mut flows, "cc", json!(cc));
        push(&mut flows, "start_s", json!(start));
        push(&mut flows, "stop_s", nan(f.stop_ns.map_or(f64::NAN, |n| n as f64 * 1e-9)));
        push(&mut flows, "size_bytes", json!(size));
        push(&mut flows, "bytes_sent", json!(o.bytes_sent));
        push(&mut flows, "bytes_delivered", json!(o.bytes_delivered));
        push(&mut flows, "goodput_bps", json!(o.bytes_delivered as f64 * 8.0 / (end - start).max(1e-9)));
        push(&mut flows, "fct_s", nan(o.fct_s));
        push(&mut flows, "packets_dropped", json!(-1));
        push(&mut flows, "retransmits", json!(o.retransmits));
        push(&mut flows, "timeouts", json!(o.timeouts));
        push(&mut flows, "fast_recoveries", json!(-1));
        push(&mut flows, "ecn_reductions", json!(-1));
        push(&mut flows, "ce_received", json!(o.ce_received));
        push(&mut flows, "min_rtt_s", nan(o.min_rtt_s));
        push(&mut flows, "srtt_s", nan(o.srtt_s));
    }
    for (k, t) in txns.iter().enumerate() {
        let g = &s.transactions[t.group];
        for (part, src, dst, size) in
            [("request", g.client, g.server, g.request_bytes), ("response", g.server, g.client, g.response_bytes)]
        {
            let i = s.flows.len() + 2 * k + usize::from(part == "response");
            let o = &outs[i];
            let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
            push(&mut flows, "flow_id", json!(i));
            push(&mut flows, "name", json!(format!("{}#{k}/{part}", g.name)));
            push(&mut flows, "kind", json!(part));
            push(&mut flows, "src", json!(node(src)));
            push(&mut flows, "dst", json!(node(dst)));
            push(&mut flows, "cc", json!(g.cc.name()));
            push(&mut flows, "start_s", json!(t.start_ns as f64 * 1e-9));
            push(&mut flows, "stop_s", json!(f64::NAN));
            push(&mut flows, "size_bytes", json!(size));
            push(&mut flows, "bytes_sent", json!(o.bytes_sent));
            push(&mut flows, "bytes_delivered", json!(o.bytes_delivered));
            let goodput = if o.fct_s > 0.0 { o.bytes_delivered as f64 * 8.0 / o.fct_s } else { f64::NAN };
            push(&mut flows, "goodput_bps", nan(goodput));
            push(&mut flows, "fct_s", nan(o.fct_s));
            push(&mut flows, "packets_dropped", json!(-1));
            push(&mut flows, "retransmits", json!(o.retransmits));
            push(&mut flows, "timeouts", json!(o.timeouts));
            push(&mut flows, "fast_recoveries", json!(-1));
            push(&mut flows, "ecn_reductions", json!(-1));
            push(&mut flows, "ce_received", json!(o.ce_received));
            push(&mut flows, "min_rtt_s", json!(f64::NAN));
            push(&mut flows, "srtt_s", json!(f64::NAN));
        }
    }
    let mut transactions: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for (k, t) in txns.iter().enumerate() {
        let g = &s.transactions[t.group];
        let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
        push(&mut transactions, "txn_id", json!(k));
        push(&mut transactions, "name", json!(g.name));
        push(&mut transactions, "client", json!(node(g.client)));
        push(&mut transactions, "server", json!(node(g.server)));
        push(&mut transactions, "request_bytes", json!(g.request_bytes));
        push(&mut transactions, "response_bytes", json!(g.response_bytes));
        push(&mut transactions, "start_s", json!(t.start_ns as f64 * 1e-9));
        push(&mut transactions, "response_time_s", nan(t.response_s));
        push(&mut transactions, "completion_time_s", nan(t.completion_s));
    }
    let mut links: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for (i, (l, e)) in s.links.iter().zip(&router.fabric.links).enumerate() {
        let st = &e.stats;
        push(&mut links, "link_id", json!(i));
        push(&mut links, "name", json!(l.name));
        push(&mut links, "src", json!(node(l.from)));
        push(&mut links, "dst", json!(node(l.to)));
        push(&mut links, "rate_bps", json!(l.rate_bps as f64));
        push(&mut links, "delay_s", json!(l.delay_ns as f64 * 1e-9));
        push(&mut links, "buffer_packets", json!(l.buffer.packets.map_or(-1, |n| n as i64)));
        push(&mut links, "buffer_bytes", json!(l.buffer.bytes.map_or(-1, |n| n as i64)));
        push(&mut links, "algorithm", json!(l.queue.name()));
        push(&mut links, "packets_in", json!(st.packets_in));
        push(&mut links, "bytes_in", json!(st.bytes_in));
        push(&mut links, "packets_out", json!(st.packets_out));
        push(&mut links, "bytes_out", json!(st.bytes_out));
        push(&mut links, "drops", json!(st.drops));
        push(&mut links, "marks", json!(st.marks));
        let (mq_b, mq_p) = mean_queue(&router.fabric.series, i as u32);
        push(&mut links, "mean_queue_bytes", json!(mq_b));
        push(&mut links, "mean_queue_packets", json!(mq_p));
        push(&mut links, "max_queue_bytes", json!(st.max_queue_bytes));
        push(&mut links, "mean_queue_delay_s", json!(mq_b * 8.0 / l.rate_bps as f64));
        push(&mut links, "utilisation", json!(st.bytes_out as f64 * 8.0 / (l.rate_bps as f64 * dur_s)));
        push(&mut links, "data_bytes_out", json!(st.data_bytes_out));
    }
    let mut link_series: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let mut prev: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    for r in &router.fabric.series {
        let (t0, b0, d0, m0) = prev.get(&r.link).copied().unwrap_or((0, 0, 0, 0));
        prev.insert(r.link, (r.time_ns, r.bytes_out, r.drops, r.marks));
        if r.time_ns <= t0 {
            continue;
        }
        let rate = (r.bytes_out - b0) as f64 * 8.0 / ((r.time_ns - t0) as f64 * 1e-9);
        let cap = s.links[r.link as usize].rate_bps as f64;
        push(&mut link_series, "time_s", json!(r.time_ns as f64 * 1e-9));
        push(&mut link_series, "link_id", json!(r.link));
        push(&mut link_series, "rate_bps", json!(rate));
        push(&mut link_series, "utilisation", json!(rate / cap));
        push(&mut link_series, "queue_bytes", json!(r.queue_bytes));
        push(&mut link_series, "queue_packets", json!(r.queue_packets));
        push(&mut link_series, "drops", json!(r.drops - d0));
        push(&mut link_series, "marks", json!(r.marks - m0));
        push(&mut link_series, "gauge", json!(r.gauge));
    }
    let mut flow_series: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let interval = s.metrics.interval_ns as f64 * 1e-9;
    if interval > 0.0 {
        for (i, o) in outs.iter().enumerate() {
            let mut k = 1;
            let mut last = 0u64;
            while k as f64 * interval <= dur_s + 1e-9 {
                let t = k as f64 * interval;
                let upto = o.samples.iter().take_while(|x| x.0 <= t).last();
                let delivered = bytes_at(&o.samples, t);
                let srtt = upto.map_or(f64::NAN, |x| x.2);
                push(&mut flow_series, "time_s", json!(t));
                push(&mut flow_series, "flow_id", json!(i));
                push(&mut flow_series, "rate_bps", json!((delivered - last) as f64 * 8.0 / interval));
                push(&mut flow_series, "cwnd_bytes", json!(-1));
                push(&mut flow_series, "ssthresh_bytes", json!(-1));
                push(&mut flow_series, "srtt_s", json!(if srtt.is_finite() && srtt > 0.0 { srtt } else { f64::NAN }));
                push(&mut flow_series, "bytes_in_flight", json!(-1));
                push(&mut flow_series, "delivered_bytes", json!(delivered));
                // The kernel's controller state is not sampled over time (null).
                push(&mut flow_series, "pacing_rate_bps", json!(f64::NAN));
                push(&mut flow_series, "cc_state", json!(""));
                push(&mut flow_series, "pacing_gain", json!(f64::NAN));
                last = delivered;
                k += 1;
            }
        }
    }
    let written = [
        ("flows", &flows),
        ("links", &links),
        ("flow_series", &flow_series),
        ("link_series", &link_series),
        ("transactions", &transactions),
    ];
    for (name, table) in written {
        // The schema is declared once (xcc_build::schema); writing another column is a bug.
        if let Err(e) = xcc_build::schema::check_columns(name, table.keys().copied()) {
            panic!("{e}");
        }
    }
    let st = &router.fabric.stats;
    json!({
        "tables": {
            "flows": flows,
            "links": links,
            "flow_series": flow_series,
            "link_series": link_series,
            "transactions": transactions,
        },
        "stats": {
            "mode": "emu",
            // What `xcc` prints for every run: here packets the router read and link crossings.
            "sim_seconds": dur_s,
            "events": st.packets_read,
            "packet_hops": router.fabric.links.iter().map(|l| l.stats.delivered_packets).sum::<u64>(),
            "packets_read": st.packets_read,
            "forwarded": st.forwarded,
            "dropped_by_links": st.dropped_by_links,
            "malformed_header": st.malformed_header,
            "not_ipv4": st.not_ipv4,
            "bad_ipv4": st.bad_ipv4,
            "bad_ipv4_checksum": st.bad_ipv4_checksum,
            "unroutable": st.unroutable,
            "ce_written": st.ce_written,
            "header_rewrites": st.header_rewrites,
            "lateness_p50_us": st.lateness_quantile_us(0.5),
            "lateness_p99_us": st.lateness_quantile_us(0.99),
            "lateness_max_us": st.lateness_max_us,
            "super_packets": st.super_packets,
            "bad_offload": st.bad_offload,
            "hosts": plan.hosts.iter().map(|h| h.name.clone()).collect::<Vec<_>>(),
        },
    })
}

/// Cumulative bytes at time `t`, interpolated linearly between samples `(time, bytes, _)`.
fn bytes_at(samples: &[(f64, u64, f64)], t: f64) -> u64 {
    let i = samples.partition_point(|x| x.0 <= t);
    match (i.checked_sub(1).map(|k| samples[k]), samples.get(i)) {
        (None, _) => 0,
        (Some(a), None) => a.1,
        (Some(a), Some(b)) => a.1 + ((b.1 - a.1) as f64 * (t - a.0) / (b.0 - a.0).max(1e-12)) as u64,
    }
}

/// Time-average queue from the samples (bytes, packets); zero without samples.
fn mean_queue(series: &[crate::router::fabric::LinkSample], link: u32) -> (f64, f64) {
    let rows: Vec<_> = series.iter().filter(|r| r.link == link).collect();
    if rows.is_empty() {
        return (0.0, 0.0);
    }
    let n = rows.len() as f64;
    (
        rows.iter().map(|r| r.queue_bytes as f64).sum::<f64>() / n,
        rows.iter().map(|r| r.queue_packets as f64).sum::<f64>() / n,
    )
}
