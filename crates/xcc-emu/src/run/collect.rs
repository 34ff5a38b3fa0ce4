//! After the run's end (or a stop): every flow's and transaction's outcome gathered from the
//! stack that carried it, joining the hosts' threads; the first failure is kept.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use xcc_build::scenario::model::{FlowKind, Scenario};
use xcc_core::Time;

use crate::hosts::sessions::SessionRun;
use crate::hosts::udp_transport::TransportRun;
use crate::os::signals::STOP;
use crate::run::outcome::{bytes_at, FlowOut, TxnOut};
use crate::run::paths::Paths;
use crate::run::traffic::Traffic;

/// What the hosts' side of a run came to.
pub struct Collected {
    /// One per flow, then a request and a response per transaction.
    pub outs: Vec<FlowOut>,
    pub txns: Vec<TxnOut>,
    /// The first failure of a flow, a transaction or a host thread.
    pub first_err: Option<io::Error>,
    /// Datagrams the hosts' own UDP sockets refused: lost before the router, outside the model.
    pub send_failures: u64,
    /// xcclab's transport's counters (zero without its flows).
    pub udp: TransportRun,
    /// Whether the hosts' transport ran at real-time priority (`None`: it did not run).
    pub hosts_realtime: Option<bool>,
    pub sessions: Option<SessionRun>,
    /// Whether any bulk flow ran on Linux TCP.
    pub had_tcp: bool,
}

/// Gathers the outcomes: xcclab's transport's (`udp`, `None` if it had no flows), then the
/// sessions', Linux TCP flows', CBR sources' and Linux TCP transactions', in that order. The
/// CBR sinks are told to finish (`cbr_stop`) once the first source's last datagrams arrived.
pub fn collect(
    s: &Scenario,
    traffic: Traffic,
    udp: Option<io::Result<TransportRun>>,
    paths: &Paths,
    cbr_stop: &AtomicBool,
) -> io::Result<Collected> {
    let Traffic { tcp_flows, cbr_flows, mut txns, tcp_txns, tcp_txn_servers, sessions, .. } = traffic;
    let no_udp_flows = udp.is_none();
    let udp = udp.unwrap_or_else(|| Ok(TransportRun::default()));
    let mut c = Collected {
        outs: vec![FlowOut::default(); s.flows.len() + 2 * txns.len()],
        txns: Vec::new(),
        first_err: udp.as_ref().err().map(|e| io::Error::new(e.kind(), e.to_string())),
        send_failures: 0,
        udp: TransportRun::default(),
        hosts_realtime: None,
        sessions: None,
        had_tcp: !tcp_flows.is_empty(),
    };
    let mut udp = udp.unwrap_or_default();
    c.hosts_realtime = (!no_udp_flows).then_some(udp.realtime);
    c.send_failures = udp.ack_send_failures;
    from_transport(s, std::mem::take(&mut udp.flows), &mut c, &mut txns);
    c.udp = udp;
    if let Some(h) = sessions {
        match h.join().map_err(|_| io::Error::other("session thread panicked"))? {
            Ok(run) => {
                from_sessions(s, &run, &mut c.outs);
                c.send_failures += run.send_failures;
                c.sessions = Some(run);
            }
            Err(e) => {
                c.first_err.get_or_insert(io::Error::new(e.kind(), format!("sessions: {e}")));
            }
        }
    }
    for f in tcp_flows {
        let sent = f.sender.join().map_err(|_| io::Error::other("sender thread panicked"))?;
        let got = f.sink.join().map_err(|_| io::Error::other("sink thread panicked"))?;
        let i = f.flow;
        match (sent, got) {
            (Ok(sent), Ok(got)) => {
                let o = &mut c.outs[i];
                o.bytes_sent = sent.info.bytes_sent;
                // Only what arrived within the run (and before the flow's stop) counts.
                let off = f.start_ns as f64 * 1e-9;
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
                c.first_err.get_or_insert(io::Error::new(e.kind(), format!("flow {}: {e}", s.flows[i].name)));
            }
        }
    }
    for f in cbr_flows {
        let sent = f.sender.join().map_err(|_| io::Error::other("cbr sender panicked"))?;
        // The last datagrams are still on the links: give them the path's delay to arrive.
        if !STOP.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_nanos(paths.two_way[f.flow]) + Duration::from_millis(20));
        }
        cbr_stop.store(true, Ordering::Relaxed);
        let got = f.sink.join().map_err(|_| io::Error::other("cbr sink panicked"))?;
        match (sent, got) {
            (Ok(sent), Ok((bytes, samples))) => {
                let o = &mut c.outs[f.flow];
                o.bytes_sent = sent;
                o.bytes_delivered = bytes;
                o.samples = samples.into_iter().map(|(t, b)| (t, b, f64::NAN)).collect();
                o.min_rtt_s = f64::NAN;
                o.srtt_s = f64::NAN;
                o.fct_s = f64::NAN;
            }
            (Err(e), _) | (_, Err(e)) => {
                c.first_err.get_or_insert(io::Error::new(e.kind(), format!("flow {}: {e}", s.flows[f.flow].name)));
            }
        }
    }
    for t in tcp_txns {
        match t.client.join().map_err(|_| io::Error::other("transaction thread panicked"))? {
            Ok((first, done)) => {
                txns[t.txn].response_s = first.unwrap_or(f64::NAN);
                txns[t.txn].completion_s = done.unwrap_or(f64::NAN);
            }
            Err(e) => {
                c.first_err.get_or_insert(io::Error::new(e.kind(), format!("transaction {}: {e}", t.txn)));
            }
        }
    }
    // Servers whose clients failed may still wait in accept(): they go with the namespaces.
    drop(tcp_txn_servers);
    c.txns = txns;
    Ok(c)
}

/// Flows on xcclab's transport, and transactions' request and response flows on it.
fn from_transport(
    s: &Scenario,
    flows: Vec<crate::hosts::udp_transport::FlowResult>,
    c: &mut Collected,
    txns: &mut [TxnOut],
) {
    let n_flows = s.flows.len();
    for r in flows {
        c.send_failures += r.send_failures;
        if r.id as usize >= n_flows {
            // A transaction's request or response flow.
            let k = (r.id as usize - n_flows) / 2;
            let start = txns[k].start_ns;
            if (r.id as usize - n_flows) % 2 == 1 {
                let since = |t: Time| t.as_ns().saturating_sub(start) as f64 * 1e-9;
                txns[k].response_s = r.first_byte_at.map_or(f64::NAN, since);
                txns[k].completion_s = r.received_all_at.map_or(f64::NAN, since);
            }
            let o = &mut c.outs[r.id as usize];
            o.bytes_delivered = r.bytes_delivered;
            o.retransmits = r.retransmits;
            o.timeouts = r.timeouts;
            let began = r.started_at.unwrap_or(Time(start));
            o.fct_s = r.received_all_at.map_or(f64::NAN, |t| t.as_ns().saturating_sub(began.as_ns()) as f64 * 1e-9);
            o.min_rtt_s = f64::NAN;
            o.srtt_s = f64::NAN;
            continue;
        }
        let o = &mut c.outs[r.id as usize];
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
}

/// Seed 004's sessions.
fn from_sessions(s: &Scenario, run: &SessionRun, outs: &mut [FlowOut]) {
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
}
