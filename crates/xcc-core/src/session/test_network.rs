//! A small deterministic driver for any [`SessionProtocol`], for convergence tests on hand-sized
//! networks without the simulator: links have a capacity and a propagation delay and no queue
//! (control packets are never delayed by data); data is a fluid at each source's current rate,
//! so a link's measured input rate is the sum of the rates of the sessions crossing it. The
//! packet walk follows the session framework's contract (downstream: link task, then
//! propagation; upstream: propagation over the reverse link, then the forward link's task).
//! The simulator's own convergence tests (xcc-sim) add queues and control-packet sizes.

use super::{ControlPacket, Direction, Forward, Hop, LinkLoad, LinkTask, SessionProtocol, SourceTask};
use crate::analysis::maxmin::{max_min_fair, MaxMinProblem};
use crate::time::{Dur, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A network and its sessions.
#[derive(Clone, Debug)]
pub struct Net {
    /// (capacity bit/s, one-way propagation delay) per link.
    pub links: Vec<(f64, Dur)>,
    /// Path (link indices) and demand of each session; all join at `join_at[i]`.
    pub sessions: Vec<(Vec<u32>, f64)>,
}

impl Net {
    /// The max-min fair rates of the sessions, with every capacity scaled by `utilisation`.
    pub fn oracle(&self, utilisation: f64) -> Vec<f64> {
        let p = MaxMinProblem {
            capacity: self.links.iter().map(|&(c, _)| c * utilisation).collect(),
            paths: self.sessions.iter().map(|(p, _)| p.clone()).collect(),
            demand: self.sessions.iter().map(|&(_, d)| d).collect(),
        };
        max_min_fair(&p).expect("valid test network").rate
    }
}

enum Ev<P> {
    /// Packet of session `s` at path position `pos` going `dir`.
    At {
        s: usize,
        pos: usize,
        dir: Direction,
        pkt: P,
    },
    /// Packet back at the source of `s`.
    Home {
        s: usize,
        pkt: P,
    },
    Wake {
        s: usize,
    },
    Tick,
}

/// Runs `P` on `net` until `until`; every session joins at time 0 plus 1 ms times its index.
/// Returns each session's rate at the end (`None` if it has none).
pub fn run<P: SessionProtocol>(params: &P::Params, net: &Net, until: Time) -> Vec<Option<f64>> {
    let mut links: Vec<P::Link> = net.links.iter().map(|&(c, _)| P::new_link(params, c)).collect();
    let mut sources: Vec<P::Source> = (0..net.sessions.len()).map(|s| P::new_source(params, s as u32)).collect();
    let tick = links.first().and_then(|l| l.tick_interval());
    let mut events: Vec<Option<Ev<P::Packet>>> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
    let mut queue: Vec<(Time, Ev<P::Packet>)> = Vec::new();
    // Joins are wake-ups too, so that sources start in a well-defined order.
    let mut joined = vec![false; net.sessions.len()];
    let mut wake_pending: Vec<Option<Time>> = vec![None; net.sessions.len()];
    for s in 0..net.sessions.len() {
        queue.push((Time::ZERO + Dur::from_ms(s as u64), Ev::Wake { s }));
    }
    if let Some(t) = tick {
        queue.push((Time::ZERO + t, Ev::Tick));
    }
    for (t, e) in queue.drain(..) {
        events.push(Some(e));
        heap.push(Reverse((t, events.len() - 1)));
    }
    // Bits offered to each link since the last tick (rates integrated over time), so that a
    // tick reports the mean input rate over its interval, as a measurement would.
    let mut bits = vec![0.0; links.len()];
    let mut last_t = Time::ZERO;
    while let Some(Reverse((now, id))) = heap.pop() {
        if now > until {
            break;
        }
        let dt = now.saturating_since(last_t).as_secs_f64();
        if dt > 0.0 {
            for (s, (path, _)) in net.sessions.iter().enumerate() {
                let r = sources[s].rate().unwrap_or(0.0);
                for &l in path {
                    bits[l as usize] += r * dt;
                }
            }
            last_t = now;
        }
        let ev = events[id].take().expect("each event runs once");
        match ev {
            Ev::Wake { s } => {
                if wake_pending[s] == Some(now) {
                    wake_pending[s] = None;
                }
                if !joined[s] {
                    joined[s] = true;
                    sources[s].join(now, net.sessions[s].1);
                }
            }
            Ev::Home { s, pkt } => sources[s].on_packet(now, pkt),
            Ev::At { s, pos, dir, mut pkt } => {
                let path = &net.sessions[s].0;
                let hop =
                    Hop { session: s as u32, link: path[pos], index: pos as u16, path_len: path.len() as u16, dir };
                if links[path[pos] as usize].on_packet(now, hop, &mut pkt) == Forward::Drop {
                    continue;
                }
                let delay = net.links[path[pos] as usize].1;
                match dir {
                    Direction::Downstream if pos + 1 < path.len() => {
                        queue.push((now + delay, Ev::At { s, pos: pos + 1, dir, pkt }))
                    }
                    Direction::Downstream => {
                        if let Some(back) = pkt.at_destination() {
                            // Back over the reverse of the last link, then its task upstream.
                            queue.push((now + delay + delay, Ev::At { s, pos, dir: Direction::Upstream, pkt: back }));
                        }
                    }
                    Direction::Upstream if pos > 0 => {
                        let d = net.links[path[pos - 1] as usize].1;
                        queue.push((now + d, Ev::At { s, pos: pos - 1, dir, pkt }))
                    }
                    Direction::Upstream => queue.push((now, Ev::Home { s, pkt })),
                }
            }
            Ev::Tick => {
                let t = tick.expect("ticks only when the links have an interval");
                for (l, link) in links.iter_mut().enumerate() {
                    let input_rate = bits[l] / t.as_secs_f64();
                    link.on_tick(now, &LinkLoad { input_rate, queue_bits: 0.0, interval: t });
                    bits[l] = 0.0;
                }
                queue.push((now + t, Ev::Tick));
            }
        }
        // Whatever happened, the sources may have something to send now or later.
        for (s, src) in sources.iter_mut().enumerate() {
            if !joined[s] {
                continue;
            }
            while let Some(pkt) = src.poll_transmit(now) {
                queue.push((now, Ev::At { s, pos: 0, dir: Direction::Downstream, pkt }));
            }
            if let Some(w) = src.next_wakeup() {
                if w > now && wake_pending[s].is_none_or(|p| p > w) {
                    wake_pending[s] = Some(w);
                    queue.push((w, Ev::Wake { s }));
                }
            }
        }
        for (t, e) in queue.drain(..) {
            events.push(Some(e));
            heap.push(Reverse((t, events.len() - 1)));
        }
    }
    sources.iter().map(|s| s.rate()).collect()
}

/// The four hand-solvable networks of protocols.md 6.8-5 (delays of a few milliseconds).
pub fn networks() -> Vec<(&'static str, Net)> {
    let ms = Dur::from_ms;
    let inf = f64::INFINITY;
    vec![
        ("single link", Net { links: vec![(100e6, ms(5))], sessions: (0..3).map(|_| (vec![0], inf)).collect() }),
        (
            // Long session over three links, one short session per link; the middle link is
            // the tightest: long and short-1 get 30, shorts 0 and 2 get 70.
            "parking lot",
            Net {
                links: vec![(100e6, ms(2)), (60e6, ms(7)), (100e6, ms(4))],
                sessions: vec![(vec![0, 1, 2], inf), (vec![0], inf), (vec![1], inf), (vec![2], inf)],
            },
        ),
        (
            // Link 0 (30 Mb/s) holds s0, s1, s2 at 10; s2 also crosses link 1 (100 Mb/s),
            // where s3 and s4 share the remaining 90: 45 each.
            "two-level bottleneck",
            Net {
                links: vec![(30e6, ms(3)), (100e6, ms(6))],
                sessions: vec![(vec![0], inf), (vec![0], inf), (vec![0, 1], inf), (vec![1], inf), (vec![1], inf)],
            },
        ),
        (
            // One session wants only 10 of 100: the other two get 45.
            "demand-limited session",
            Net { links: vec![(100e6, ms(5))], sessions: vec![(vec![0], 10e6), (vec![0], inf), (vec![0], inf)] },
        ),
    ]
}
