//! PFC at the transmitter (IEEE 802.1Qbb): an XOFF that reaches a link's sending end stops it
//! after the packet in transmission; the packets waiting behind it, and those that arrive while
//! it is paused, are *held* — their transmission start is unknown until XON, so they carry no
//! start or end ([`Time::NEVER`]) and no delivery is scheduled for them. XON re-times them back
//! to back from the moment it arrives (or the end of the packet in transmission). The switch's
//! side (which ingress port asks for the pause) is [`crate::link::pfc_fabric`].
//!
//! A held entry's `start` holds the start already counted in `stats.wait_ns` (its earlier
//! forecast or its arrival), so XON adds exactly the extra wait; the held ones are never
//! reported as departures, because `advance` returns at once while the link is paused.
//!
//! Pause frames stop the transmitter until XON (no pause quanta, as htsim's lossless queues;
//! a switch re-sends XOFF before the quanta expire, so the effect is the same).

use super::{LinkModel, PacketStore, PipeEntry};
use crate::{Dur, Time};

/// What PFC did to one link's transmitter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PauseStats {
    /// XOFF frames that reached the transmitter (a repeated XOFF while paused included).
    pub xoff_received: u64,
    /// Time paused, closed intervals only ([`LinkModel::paused_ns`] adds the open one).
    pub paused_ns: u64,
    /// When the open pause began.
    pub since: Time,
}

impl<T: Copy> LinkModel<T> {
    /// Whether PFC holds the transmitter now.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Total time paused up to `now`.
    pub fn paused_ns(&self, now: Time) -> u64 {
        let open = if self.paused { now.saturating_since(self.pause.since).as_ns() } else { 0 };
        self.pause.paused_ns + open
    }

    /// When the next waiting packet starts its transmission (`None`: none waiting, or held).
    pub fn next_start(&self) -> Option<Time> {
        self.pipe.get(self.started).map(|e| e.start).filter(|_| !self.paused)
    }

    /// An XOFF reached the transmitter at `now`: it finishes the packet in transmission and
    /// holds the rest.
    pub fn pause<S: PacketStore<T> + ?Sized>(&mut self, now: Time, store: &mut S) {
        self.pause.xoff_received += 1;
        if self.paused {
            return;
        }
        self.advance(now, store);
        self.paused = true;
        self.pause.since = now;
        for e in self.pipe.iter_mut().skip(self.started) {
            // Its forecast wait from `now` on is taken back; XON counts the real one.
            self.stats.wait_ns -= (e.start.as_ns() - now.as_ns()) as u128;
            e.start = now;
            e.end = Time::NEVER;
        }
        self.busy_until = match self.started {
            0 => now.min(self.busy_until),
            k => self.pipe[k - 1].end,
        };
        self.busy_frac = 0;
    }

    /// An XON reached the transmitter at `now`: the held packets are timed back to back from
    /// `now` (or the end of the packet in transmission). True when the head of the pipe was
    /// held: the driver schedules its delivery.
    pub fn resume<S: PacketStore<T> + ?Sized>(&mut self, now: Time, store: &mut S) -> bool {
        if !self.paused {
            return false;
        }
        self.paused = false;
        self.pause.paused_ns += now.saturating_since(self.pause.since).as_ns();
        let head_was_held = self.started == 0 && !self.pipe.is_empty();
        let mut busy = self.busy_until.max(now);
        let mut frac = 0;
        // The arrival time of the packet ahead at the far end (links stay FIFO under jitter).
        let mut ahead = match self.started {
            0 => 0,
            k => self.arrival_ns(&self.pipe[k - 1]),
        };
        for k in self.started..self.pipe.len() {
            let (whole, rem) = self.tx_time(self.pipe[k].bytes);
            frac += rem;
            let mut ns = whole;
            if frac >= self.rate_bps {
                frac -= self.rate_bps;
                ns += 1;
            }
            let e = &mut self.pipe[k];
            self.stats.wait_ns += (busy.as_ns() - e.start.as_ns()) as u128;
            e.start = busy;
            e.end = Time(busy.as_ns() + ns);
            busy = e.end;
            let own = (e.end + self.delay).as_ns();
            e.jitter_ns = (e.jitter_ns as u64).max(ahead.saturating_sub(own)).min(u32::MAX as u64) as u32;
            ahead = own + e.jitter_ns as u64;
        }
        self.busy_until = busy;
        self.busy_frac = frac;
        self.advance(now, store);
        head_was_held
    }

    /// A packet arriving while paused joins the queue held (the buffer check and the algorithm
    /// have passed it).
    pub(super) fn hold(&mut self, now: Time, item: T, bytes: u32, is_data: bool) -> super::Offer<T> {
        let jitter_ns = if self.jitter_ns == 0 {
            0
        } else {
            (crate::rng::uniform01(&mut self.rng) * (self.jitter_ns as f64 + 1.0)) as u32
        };
        self.integrate(now);
        self.pipe.push_back(PipeEntry { item, bytes, is_data, jitter_ns, start: now, end: Time::NEVER });
        self.waiting_bytes += bytes as u64;
        self.waiting_packets += 1;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.waiting_packets);
        super::Offer::Queued { first: false }
    }

    fn arrival_ns(&self, e: &PipeEntry<T>) -> u64 {
        (e.end + self.delay + Dur(e.jitter_ns as u64)).as_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Inline, LinkModel, Offer};
    use crate::algorithms::droptail::{DropTail, DropTailConfig};
    use crate::link::AnyLinkAlgorithm;
    use crate::rng::component_rng;
    use crate::{Dur, Packet, Time};

    #[derive(Copy, Clone, Default)]
    struct Item(Packet);
    impl AsRef<Packet> for Item {
        fn as_ref(&self) -> &Packet {
            &self.0
        }
    }
    impl AsMut<Packet> for Item {
        fn as_mut(&mut self) -> &mut Packet {
            &mut self.0
        }
    }

    fn item() -> Item {
        Item(Packet { wire_bytes: 1500, ..Packet::default() })
    }

    /// 1 Gbit/s (1500 B = 12 us), 1 us delay; three packets at 0 start at 0, 12, 24 us.
    ///   t = 5 us   XOFF: the first finishes (ends 12, delivered 13); the other two are held
    ///   t = 20 us  a fourth arrives, held too
    ///   t = 50 us  XON: they start at 50, 62, 74 us (delivered 63, 75, 87 us)
    /// Paused 45 us; waits 0 + (50 − 0) + (62 − 0) + (74 − 20) = 166 us.
    #[test]
    fn xoff_holds_the_waiting_packets_and_xon_retimes_them() {
        let algo = AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()));
        let mut l: LinkModel<Item> =
            LinkModel::new(1_000_000_000, Dur::from_us(1), u64::MAX, u64::MAX, algo, component_rng(1, 4, 0));
        let us = |n: u64| Time(n * 1000);
        for _ in 0..3 {
            l.offer(us(0), item(), &mut Inline);
        }
        l.pause(us(5), &mut Inline);
        assert!(l.is_paused());
        assert_eq!(l.next_start(), None);
        assert_eq!(l.next_delivery(), Some(us(13)), "the packet in transmission goes on");
        assert!(matches!(l.offer(us(20), item(), &mut Inline), Offer::Queued { first: false }));
        l.deliver(us(13), &mut Inline);
        assert_eq!(l.next_delivery(), None, "held: no delivery before XON");
        assert_eq!(l.waiting_packets(), 3);
        assert!(l.resume(us(50), &mut Inline), "the head was held");
        let starts: Vec<u64> = l.pipe().map(|e| e.start.as_ns() / 1000).collect();
        assert_eq!(starts, vec![50, 62, 74]);
        assert_eq!(l.next_delivery(), Some(us(63)));
        assert_eq!(l.waiting_packets(), 2, "the first held one started at XON");
        assert_eq!(l.paused_ns(us(100)), 45_000);
        assert_eq!(l.stats.wait_ns, 166_000);
        assert_eq!(l.pause.xoff_received, 1);
        assert!(!l.resume(us(60), &mut Inline), "XON while running does nothing");
    }
}
