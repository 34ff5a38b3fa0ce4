//! One direction of a link in virtual time, as in the simulator: when a packet arrives its
//! transmission start is known at once (`max(now, busy_until)`), and so are its departure
//! (`busy_until += bytes * 8 / rate`, exact, with the sub-nanosecond remainder carried while the
//! link stays busy) and its delivery at the far end (`departure + delay`). The backlog seen by
//! the link algorithm is exact: the packets whose transmission has not started yet.
//!
//! The link holds packet *metadata* (which buffer, where its congestion header lives); the bytes
//! stay in the router's buffer pool and are rewritten once, when the packet leaves the router.

use std::collections::VecDeque;

use xcc_core::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView, Verdict};
use xcc_core::wire::{CongestionHeader, Ecn};
use xcc_core::{FlowId, Packet, Time};

/// Everything the router knows about a packet in flight between its TUN devices.
#[derive(Copy, Clone, Debug)]
pub struct InFlight {
    /// Index of the packet's bytes in the router's buffer pool.
    pub slot: u32,
    /// The packet as the algorithms see it (may be rewritten on the way).
    pub pkt: Packet,
    /// ECN bits and congestion header as read, to know what to write back.
    pub read_ecn: Ecn,
    pub read_cc: CongestionHeader,
    /// Which carrier found the header and where (`None`: plain IP).
    pub carrier: Option<(u8, u16)>,
    /// Route (index into the router's routes) and the hop this packet is on.
    pub route: u32,
    pub hop: u32,
    /// When the packet entered the router (real time), for delay statistics.
    pub entered: Time,
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    f: InFlight,
    start: Time,
    deliver: Time,
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub data_bytes_out: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    pub marks: u64,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
}

pub struct EmuLink {
    pub name: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    max_packets: u64,
    max_bytes: u64,
    pub algo: AnyLinkAlgorithm,
    wants_dequeue: bool,
    passive: bool,
    pipe: VecDeque<Entry>,
    /// Entries at the front of `pipe` whose transmission has started.
    started: usize,
    busy_until: Time,
    busy_frac: u64,
    waiting_bytes: u64,
    waiting_packets: u64,
    /// Latest instant the link was told about: arrivals handed over from another link carry
    /// their (earlier) scheduled time, and the algorithm must see time move forward only.
    last_now: Time,
    pub stats: LinkStats,
}

/// The waiting packets, as the link algorithm may see and mark them.
struct View<'a> {
    waiting: &'a mut [Entry],
    waiting_bytes: u64,
    waiting_packets: u64,
    idle_since: Option<Time>,
    rate_bps: u64,
    marks: u64,
}

impl QueueView for View<'_> {
    fn backlog_bytes(&self) -> u64 {
        self.waiting_bytes
    }
    fn backlog_packets(&self) -> u32 {
        self.waiting_packets as u32
    }
    fn idle_since(&self) -> Option<Time> {
        self.idle_since
    }
    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    fn visit_from_tail(&self, f: &mut dyn FnMut(FlowId, u32) -> bool) {
        for e in self.waiting.iter().rev() {
            if !f(e.f.pkt.flow, e.f.pkt.wire_bytes) {
                break;
            }
        }
    }
    fn mark_first_of(&mut self, flow: FlowId) -> bool {
        match self.waiting.iter_mut().find(|e| e.f.pkt.flow == flow) {
            Some(e) if e.f.pkt.ecn.is_ect() => {
                e.f.pkt.ecn = Ecn::Ce;
                self.marks += 1;
                true
            }
            _ => false,
        }
    }
}

impl EmuLink {
    pub fn new(
        name: String,
        rate_bps: u64,
        delay_ns: u64,
        max_packets: u64,
        max_bytes: u64,
        algo: AnyLinkAlgorithm,
    ) -> EmuLink {
        EmuLink {
            name,
            rate_bps,
            delay_ns,
            max_packets,
            max_bytes,
            wants_dequeue: algo.wants_dequeue(),
            passive: algo.is_passive(),
            algo,
            pipe: VecDeque::with_capacity(256),
            started: 0,
            busy_until: Time::ZERO,
            busy_frac: 0,
            waiting_bytes: 0,
            waiting_packets: 0,
            last_now: Time::ZERO,
            stats: LinkStats::default(),
        }
    }

    /// Reports, in order, every transmission that starts at or before `t`.
    pub fn advance(&mut self, t: Time) {
        while let Some(e) = self.pipe.get_mut(self.started) {
            if e.start > t {
                break;
            }
            self.waiting_bytes -= e.f.pkt.wire_bytes as u64;
            self.waiting_packets -= 1;
            self.started += 1;
            if self.wants_dequeue {
                self.algo.on_dequeue(e.start, &mut e.f.pkt, self.waiting_bytes);
            }
        }
    }

    /// Offers a packet at `now`; if it is dropped, returns its buffer slot (the caller frees it).
    pub fn offer(&mut self, now: Time, mut f: InFlight) -> Result<(), u32> {
        let now = now.max(self.last_now);
        self.last_now = now;
        self.advance(now);
        let bytes = f.pkt.wire_bytes as u64;
        self.stats.packets_in += 1;
        self.stats.bytes_in += bytes;
        let verdict = if self.passive {
            Verdict::Queue
        } else {
            let idle_since = (self.started == self.pipe.len() && now >= self.busy_until).then_some(self.busy_until);
            let started = self.started;
            let (a, b) = self.pipe.as_mut_slices();
            // The waiting packets are contiguous only if they lie in one half of the ring.
            if started < a.len() && !b.is_empty() {
                self.pipe.make_contiguous();
            }
            let (a, b) = self.pipe.as_mut_slices();
            let waiting = if started < a.len() { &mut a[started..] } else { &mut b[started - a.len()..] };
            let mut view = View {
                waiting,
                waiting_bytes: self.waiting_bytes,
                waiting_packets: self.waiting_packets,
                idle_since,
                rate_bps: self.rate_bps,
                marks: 0,
            };
            let v = self.algo.on_enqueue(now, &mut f.pkt, &mut view);
            self.stats.marks += view.marks;
            v
        };
        let over = self.waiting_packets + 1 > self.max_packets || self.waiting_bytes + bytes > self.max_bytes;
        if verdict == Verdict::Drop || over {
            self.stats.drops += 1;
            self.stats.drop_bytes += bytes;
            return Err(f.slot);
        }
        if verdict == Verdict::Mark && f.pkt.ecn.is_ect() {
            f.pkt.ecn = Ecn::Ce;
            self.stats.marks += 1;
        }
        let start = if now > self.busy_until {
            self.busy_frac = 0;
            now
        } else {
            self.busy_until
        };
        let num = bytes * 8_000_000_000 + self.busy_frac;
        let ns = num / self.rate_bps;
        self.busy_frac = num % self.rate_bps;
        let end = Time(start.as_ns() + ns);
        self.busy_until = end;
        self.pipe.push_back(Entry { f, start, deliver: Time(end.as_ns() + self.delay_ns) });
        self.waiting_bytes += bytes;
        self.waiting_packets += 1;
        self.advance(now);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.waiting_packets);
        Ok(())
    }

    /// When the head of the pipe reaches the far end, if anything is in flight.
    pub fn next_delivery(&self) -> Option<Time> {
        self.pipe.front().map(|e| e.deliver)
    }

    /// The next event of this link: a delivery or the algorithm's control interval.
    pub fn next_event(&self) -> Time {
        let d = self.next_delivery().unwrap_or(Time::NEVER);
        d.min(self.algo.poll_timeout().unwrap_or(Time::NEVER))
    }

    /// Takes the head packet if it is due at `now`; returns it with its scheduled delivery time.
    pub fn pop_due(&mut self, now: Time) -> Option<(InFlight, Time)> {
        let head = self.pipe.front()?;
        if head.deliver > now {
            return None;
        }
        // The head's transmission start is reported (and its dequeue stamp written) before it
        // is taken: a link nobody touched since that start has not run `on_dequeue` on it yet.
        let start = head.start;
        self.advance(start);
        let e = self.pipe.pop_front().expect("the head is still there");
        self.started -= 1;
        self.stats.packets_out += 1;
        self.stats.bytes_out += e.f.pkt.wire_bytes as u64;
        if e.f.pkt.is_data() {
            self.stats.data_bytes_out += e.f.pkt.wire_bytes as u64;
        }
        Some((e.f, e.deliver))
    }

    /// Runs the algorithm's control interval if it is due at `now`.
    pub fn tick(&mut self, now: Time) {
        if let Some(t) = self.algo.poll_timeout() {
            if t <= now {
                let t = t.max(self.last_now);
                self.last_now = t;
                self.advance(t);
                self.algo.on_timeout(t, self.waiting_bytes);
            }
        }
    }

    /// Packets and bytes waiting at `now` (transmission not started).
    pub fn backlog(&mut self, now: Time) -> (u64, u64) {
        self.advance(now);
        (self.waiting_packets, self.waiting_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::link::{DropTail, DropTailConfig};

    fn flight(bytes: u32) -> InFlight {
        InFlight {
            slot: 0,
            pkt: Packet { wire_bytes: bytes, ..Packet::default() },
            read_ecn: Ecn::NotEct,
            read_cc: CongestionHeader::None,
            carrier: None,
            route: 0,
            hop: 0,
            entered: Time::ZERO,
        }
    }

    /// 1500 B at 10 Mbit/s is 1.2 ms; three back-to-back packets leave 1.2 ms apart and arrive
    /// 5 ms after they leave; the fourth finds three waiting... and the buffer of 2 drops it.
    #[test]
    fn serialisation_delay_and_buffer_are_exact() {
        let dt = AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()));
        let mut l = EmuLink::new("a->b".into(), 10_000_000, 5_000_000, 2, u64::MAX, dt);
        for _ in 0..3 {
            l.offer(Time(0), flight(1500)).unwrap();
        }
        assert_eq!(l.backlog(Time(0)), (2, 3000), "one in service, two waiting");
        assert!(l.offer(Time(0), flight(1500)).is_err(), "buffer of 2 is full");
        assert_eq!(l.next_delivery(), Some(Time(6_200_000)));
        assert!(l.pop_due(Time(6_199_999)).is_none());
        let (_, t) = l.pop_due(Time(7_000_000)).unwrap();
        assert_eq!(t, Time(6_200_000));
        assert_eq!(l.next_delivery(), Some(Time(7_400_000)));
        assert_eq!(l.backlog(Time(1_200_000)), (1, 1500));
        assert_eq!(l.backlog(Time(2_400_000)), (0, 0));
        // An idle link starts the next packet at its arrival.
        l.offer(Time(50_000_000), flight(125)).unwrap();
        let _ = l.pop_due(Time(u64::MAX / 2));
        let _ = l.pop_due(Time(u64::MAX / 2));
        assert_eq!(l.next_delivery(), Some(Time(50_000_000 + 100_000 + 5_000_000)));
        assert_eq!(l.stats.drops, 1);
    }

    /// A packet queued behind another starts its transmission while nothing touches the link;
    /// when it is taken at its delivery, it carries the stamp its link algorithm wrote at that
    /// start (RCP's rate, written on dequeue).
    //
    //  t=0: p1, p2 offered (p1 starts, p2 waits) │ t=1.2 ms: p2 starts (nobody looks)
    //  t=50 ms: both taken → both carry R = 5 % of C
    #[test]
    fn a_packet_taken_after_an_unobserved_start_carries_its_dequeue_stamp() {
        use xcc_core::link::{RcpRouter, RcpRouterConfig};
        use xcc_core::wire::{RcpHeader, Segment, SegmentKind};
        use xcc_core::Dur;
        let rcp = RcpRouter::new(RcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_secs(1));
        let mut l = EmuLink::new("a->b".into(), 10_000_000, 5_000_000, 10, u64::MAX, AnyLinkAlgorithm::Rcp(rcp));
        let data = || {
            let mut f = flight(1500);
            f.pkt.seg = Segment { kind: SegmentKind::Data, payload_bytes: 1430, ..Segment::default() };
            f.pkt.cc = CongestionHeader::Rcp(RcpHeader::default());
            f
        };
        l.offer(Time(0), data()).unwrap();
        l.offer(Time(0), data()).unwrap();
        let want = CongestionHeader::Rcp(RcpHeader { rate: 0.05 * 10e6 / 8.0, rtt_us: 0 });
        for _ in 0..2 {
            let (f, _) = l.pop_due(Time(50_000_000)).unwrap();
            assert_eq!(f.pkt.cc, want);
        }
    }

    /// 1 byte at 3 bit/s is 8/3 s: the remainder carries, so three bytes take exactly 8 s.
    #[test]
    fn remainder_carries_while_busy() {
        let dt = AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()));
        let mut l = EmuLink::new("x".into(), 3, 0, 10, u64::MAX, dt);
        for _ in 0..3 {
            l.offer(Time(0), flight(1)).unwrap();
        }
        let mut last = Time::ZERO;
        while let Some((_, t)) = l.pop_due(Time(u64::MAX / 2)) {
            last = t;
        }
        assert_eq!(last, Time(8_000_000_000));
    }
}
