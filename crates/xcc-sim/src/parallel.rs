//! The parallel packet engine: the network cut into domains ([`Partition`], a function of the
//! scenario only), one [`Simulation`] and event heap per domain, run in windows of the
//! lookahead (conservative synchronisation, as ns-3's MPI mode with time windows).
//!
//! In each window every domain runs its events before the window's end on its own; at the end
//! each sends the packets that left it over a cut link (`Simulation::ship`); after a barrier
//! each domain takes in the packets sent to it, ordered by (arrival time, sending domain, order
//! of sending), and a second barrier opens the next window. Nothing in a domain's heap depends
//! on which thread ran which domain or when: `--threads 1` runs the same domains in the same
//! windows on one thread, and every thread count gives the same bytes.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use xcc_core::{Dur, Time};

use crate::network::Network;
use crate::output::RunOutput;
use crate::partition::Partition;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::domain::{merge, Shipment};
use crate::sim::{RunError, Simulation};

/// Runs `scenario` on `threads` threads (at least 1): the serial engine when its partition is
/// one domain, else the windowed engine over its domains. Returns the output and the number
/// of domains.
pub fn run_scenario(
    scenario: Scenario,
    metrics: bool,
    threads: usize,
    capture: Option<&str>,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<(RunOutput, usize), RunError> {
    let source = scenario.name.clone();
    let fail = |mut e: ScenarioError| {
        if e.source.is_empty() {
            e.source = source.clone();
        }
        RunError::Scenario(e)
    };
    let network = Network::build(scenario.clone()).map_err(fail)?;
    let part = Partition::of(&network);
    if part.domains == 1 {
        let mut sim = Simulation::new(network, metrics);
        if let Some(link) = capture {
            sim.capture_link(link).map_err(fail)?;
        }
        return Ok((sim.run(progress)?, 1));
    }
    let part = Arc::new(part);
    let k = part.domains;
    // Every domain builds the same network (deterministic); the copies are built side by side.
    let mut networks = vec![Ok(network)];
    let builders = threads.clamp(1, k - 1);
    let rest: Vec<Result<Network, ScenarioError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..builders)
            .map(|b| {
                let scenario = &scenario;
                s.spawn(move || {
                    (1..k)
                        .filter(|d| d % builders == b)
                        .map(|d| (d, Network::build(scenario.clone())))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles.into_iter().flat_map(|h| h.join().expect("network build")).collect();
        all.sort_by_key(|(d, _)| *d);
        all.into_iter().map(|(_, n)| n).collect()
    });
    networks.extend(rest);
    let mut sims = Vec::with_capacity(k);
    for (d, n) in networks.into_iter().enumerate() {
        sims.push(Simulation::new_in(n.map_err(fail)?, metrics, Some((part.clone(), d as u32))));
    }
    if let Some(name) = capture {
        let at = sims[0].scenario().links.iter().position(|l| l.name == name);
        let owner = at.map_or(0, |l| part.link_owner[l] as usize);
        sims[owner].capture_link(name).map_err(fail)?;
    }
    Ok((run_domains(sims, part.lookahead, threads, progress)?, k))
}

/// Runs the domains' windows on `threads` threads and merges the results.
fn run_domains(
    mut sims: Vec<Simulation>,
    lookahead: Dur,
    threads: usize,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<RunOutput, RunError> {
    let wall = std::time::Instant::now();
    let k = sims.len();
    let per = k.div_ceil(threads.clamp(1, k));
    let workers = k.div_ceil(per);
    let end = sims[0].end_time();
    let mail: Vec<Mailbox> = (0..k).map(|_| Mutex::new(Vec::new())).collect();
    let sync = Sync { mail, barrier: Barrier::new(workers), failed: AtomicBool::new(false), end, lookahead, k };
    let panics: Vec<Box<dyn std::any::Any + Send>> = std::thread::scope(|s| {
        let mut chunks = sims.chunks_mut(per).enumerate();
        let (_, first) = chunks.next().expect("a domain");
        let handles: Vec<_> = chunks
            .map(|(t, chunk)| {
                let sync = &sync;
                s.spawn(move || sync.work(t * per, chunk, None))
            })
            .collect();
        let mut panics: Vec<_> = sync.work(0, first, progress).into_iter().collect();
        for h in handles {
            match h.join() {
                Ok(p) => panics.extend(p),
                Err(p) => panics.push(p),
            }
        }
        panics
    });
    if let Some(p) = panics.into_iter().next() {
        resume_unwind(p);
    }
    for sim in &mut sims {
        sim.finish_domain()?;
    }
    merge(sims, wall.elapsed().as_secs_f64())
}

/// The packets sent to one domain in a window, with their sender.
type Mailbox = Mutex<Vec<(usize, Vec<Shipment>)>>;

/// What the workers share.
struct Sync {
    /// Per receiving domain: the packets sent to it in this window, with their sender.
    mail: Vec<Mailbox>,
    barrier: Barrier,
    /// A worker panicked: the others leave at the next barrier (rather than wait forever).
    failed: AtomicBool,
    end: Time,
    lookahead: Dur,
    k: usize,
}

impl Sync {
    /// Runs domains `base..base + chunk.len()` window by window; returns a panic's payload.
    fn work(
        &self,
        base: usize,
        chunk: &mut [Simulation],
        mut progress: Option<&mut dyn FnMut(f64)>,
    ) -> Option<Box<dyn std::any::Any + Send>> {
        let w = self.lookahead.as_ns();
        let end = self.end.as_ns();
        let mut window_end = w;
        loop {
            let upto = Time((window_end - 1).min(end));
            let last = upto.as_ns() == end;
            let ran = catch_unwind(AssertUnwindSafe(|| {
                for sim in chunk.iter_mut() {
                    sim.run_window(upto);
                }
                if last {
                    return;
                }
                for (i, sim) in chunk.iter_mut().enumerate() {
                    let mut by_domain: Vec<Vec<Shipment>> = (0..self.k).map(|_| Vec::new()).collect();
                    for s in sim.ship(Time(window_end), self.lookahead) {
                        by_domain[s.to as usize].push(s);
                    }
                    for (to, v) in by_domain.into_iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                        self.mail[to].lock().expect("mail").push((base + i, v));
                    }
                }
            }));
            if let Err(p) = ran {
                self.failed.store(true, Ordering::SeqCst);
                if !last {
                    self.barrier.wait();
                    self.barrier.wait();
                }
                return Some(p);
            }
            if last {
                return None;
            }
            self.barrier.wait();
            if self.failed.load(Ordering::SeqCst) {
                self.barrier.wait();
                return None;
            }
            for (i, sim) in chunk.iter_mut().enumerate() {
                let mut got = std::mem::take(&mut *self.mail[base + i].lock().expect("mail"));
                got.sort_by_key(|(from, _)| *from);
                let mut all: Vec<Shipment> = got.into_iter().flat_map(|(_, v)| v).collect();
                // Stable: equal times keep (sending domain, order of sending).
                all.sort_by_key(|s| s.at);
                sim.receive(all);
            }
            self.barrier.wait();
            if self.failed.load(Ordering::SeqCst) {
                return None;
            }
            if let Some(p) = progress.as_mut() {
                p(window_end as f64 / end as f64);
            }
            window_end += w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{resolve, Format};

    /// 64 routers in a chain (200-500 us links: cut into four domains), a host on each, and
    /// TCP, CBR and session flows across the cuts.
    fn chain() -> Scenario {
        let mut t = String::from("name = \"c\"\nduration = \"200ms\"\nseed = 5\n[metrics]\ninterval = \"20ms\"\n");
        for i in 0..64 {
            t += &format!("[[router]]\nname = \"r{i}\"\n[[host]]\nname = \"h{i}\"\n");
            t += &format!(
                "[[link]]\nbetween = [\"h{i}\", \"r{i}\"]\nrate = \"1Gbps\"\ndelay = \"1us\"\nbuffer = \"1000pkt\"\n"
            );
            if i > 0 {
                let (delay, buf) = (200 + 100 * (i % 4), if i % 7 == 0 { 30 } else { 400 });
                t += &format!(
                    "[[link]]\nbetween = [\"r{}\", \"r{i}\"]\nrate = \"100Mbps\"\ndelay = \"{delay}us\"\nbuffer = \"{buf}pkt\"\n",
                    i - 1
                );
            }
        }
        for (k, (src, dst, extra)) in [
            ("h0", "h63", "cc = \"cubic\""),
            ("h62", "h1", "cc = \"newreno\"\nsize = \"200KB\""),
            ("h20", "h50", "kind = \"cbr\"\nrate = \"20Mbps\""),
            ("h33", "h2", "kind = \"session\"\nprotocol = \"slbn\""),
            ("h10", "h12", "cc = \"newreno\""),
        ]
        .iter()
        .enumerate()
        {
            t += &format!("[[flow]]\nname = \"f{k}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\n{extra}\n");
        }
        resolve(&t, "c.toml", Format::Toml).unwrap()
    }

    fn column(out: &RunOutput, table: &str, name: &str) -> Vec<i64> {
        let t = match table {
            "flows" => &out.flows,
            "links" => &out.links,
            _ => &out.flow_series,
        };
        t.i64(name).to_vec()
    }

    /// One and two threads give the same tables; the packets delivered match the serial
    /// engine's run of the same network (only the order of events at equal times may differ,
    /// and with these delays none do: every count is equal).
    #[test]
    fn domains_match_the_serial_engine_and_each_other() {
        let s = chain();
        let (one, k) = run_scenario(s.clone(), true, 1, None, None).unwrap();
        assert_eq!(k, 4);
        let (two, _) = run_scenario(s.clone(), true, 2, None, None).unwrap();
        let serial = Simulation::new(Network::build(s).unwrap(), true).run(None).unwrap();
        for (table, col) in [
            ("flows", "bytes_delivered"),
            ("flows", "bytes_sent"),
            ("flows", "retransmits"),
            ("flows", "packets_dropped"),
            ("links", "packets_in"),
            ("links", "drops"),
            ("flow_series", "delivered_bytes"),
        ] {
            assert_eq!(column(&one, table, col), column(&two, table, col), "{table}.{col}");
            assert_eq!(column(&one, table, col), column(&serial, table, col), "{table}.{col} against serial");
        }
        assert!(column(&one, "flows", "bytes_delivered").iter().all(|&b| b > 0));
        assert_eq!(one.stats.packet_hops, serial.stats.packet_hops);
        assert_eq!(one.stats.events, serial.stats.events);
    }

    /// Seed 004's sessions on a small transit-stub network (68 routers): every table of the
    /// windowed engine equals the serial engine's.
    #[test]
    fn sessions_on_a_transit_stub_network_match_the_serial_engine() {
        let t = "name = \"ts\"\nduration = \"100ms\"\nseed = 3\n[metrics]\ninterval = \"25ms\"\n[sessions]\n\
                 protocol = \"slbn\"\npacket_size = \"1500B\"\ntopology = { transit_stub = { transit_domains = 2, \
                 transit_routers_per_domain = 2, stubs_per_transit_router = 2, routers_per_stub = 8 } }\n\
                 workload = { arrivals = [{ count = 300, from_s = 0.0, to_s = 0.05 }] }\n";
        let s = resolve(t, "ts.toml", Format::Toml).unwrap();
        let (two, k) = run_scenario(s.clone(), true, 2, None, None).unwrap();
        assert_eq!(k, 4);
        let serial = Simulation::new(Network::build(s).unwrap(), true).run(None).unwrap();
        for (table, col) in [
            ("flows", "bytes_delivered"),
            ("flows", "bytes_sent"),
            ("links", "packets_in"),
            ("links", "bytes_out"),
            ("flow_series", "delivered_bytes"),
        ] {
            assert_eq!(column(&two, table, col), column(&serial, table, col), "{table}.{col} against serial");
        }
        assert_eq!(two.link_series.f64("rate_bps"), serial.link_series.f64("rate_bps"));
        assert_eq!(two.stats.packet_hops, serial.stats.packet_hops);
        assert_eq!(two.stats.events, serial.stats.events);
    }
}
