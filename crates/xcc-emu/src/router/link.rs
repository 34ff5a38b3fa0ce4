//! One direction of a link: the core link model ([`xcc_core::link::model`]) carrying the
//! router's packet metadata, plus the emulator's clock. Packets handed over from another link
//! carry their (earlier) scheduled time, so the link keeps the latest instant it was told about
//! and never lets the algorithm see time go back.
//!
//! The link holds packet *metadata* (which buffer, where its congestion header lives); the bytes
//! stay in the router's buffer pool and are rewritten once, when the packet leaves the router.

use std::ops::Deref;

use xcc_core::link::model::{Inline, LinkModel, Offer};
use xcc_core::link::{AnyLinkAlgorithm, LinkAlgorithm};
use xcc_core::rng::{component_rng, kind};
use xcc_core::wire::{CongestionHeader, Ecn};
use xcc_core::{Dur, Packet, Time};

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
    /// A session control packet's tag in the router's [`crate::router::sessions::SessionRouter`]
    /// (0: not one).
    pub ctrl: u32,
}

impl AsRef<Packet> for InFlight {
    fn as_ref(&self) -> &Packet {
        &self.pkt
    }
}

impl AsMut<Packet> for InFlight {
    fn as_mut(&mut self) -> &mut Packet {
        &mut self.pkt
    }
}

pub struct EmuLink {
    pub name: String,
    model: LinkModel<InFlight>,
    /// Latest instant the link was told about.
    last_now: Time,
}

/// Read access to the model (rate, algorithm, counters).
impl Deref for EmuLink {
    type Target = LinkModel<InFlight>;
    fn deref(&self) -> &LinkModel<InFlight> {
        &self.model
    }
}

impl EmuLink {
    /// A link with no random loss and no jitter (the real network adds its own).
    pub fn new(
        name: String,
        rate_bps: u64,
        delay_ns: u64,
        max_packets: u64,
        max_bytes: u64,
        algo: AnyLinkAlgorithm,
    ) -> EmuLink {
        // Never drawn from: loss and jitter stay 0.
        let rng = component_rng(0, kind::LINK_LOSS, 0);
        let model = LinkModel::new(rate_bps, Dur(delay_ns), max_packets, max_bytes, algo, rng);
        EmuLink { name, model, last_now: Time::ZERO }
    }

    /// Moves the clock to `now`, or keeps it where it is if `now` is earlier.
    fn clock(&mut self, now: Time) -> Time {
        self.last_now = now.max(self.last_now);
        self.last_now
    }

    /// Offers a packet at `now`; if it is dropped, returns its buffer slot (the caller frees it).
    pub fn offer(&mut self, now: Time, f: InFlight) -> Result<(), u32> {
        let now = self.clock(now);
        match self.model.offer(now, f, &mut Inline) {
            Offer::Dropped(f) => Err(f.slot),
            Offer::Queued { .. } => Ok(()),
        }
    }

    /// The next event of this link: a delivery or the algorithm's control interval.
    pub fn next_event(&self) -> Time {
        let d = self.model.next_delivery().unwrap_or(Time::NEVER);
        d.min(self.model.algo.poll_timeout().unwrap_or(Time::NEVER))
    }

    /// Takes the head packet if it is due at `now`; returns it with its scheduled delivery time.
    pub fn pop_due(&mut self, now: Time) -> Option<(InFlight, Time)> {
        let at = self.model.next_delivery().filter(|&at| at <= now)?;
        // The head's transmission start is reported (and its dequeue stamp written) before it
        // is taken; only up to that start, since a later arrival may still carry an earlier time.
        let start = self.model.head_start().expect("a head to deliver");
        self.model.advance(start, &mut Inline);
        Some((self.model.pop_head(), at))
    }

    /// Runs the algorithm's control interval if it is due at `now`.
    pub fn tick(&mut self, now: Time) {
        if let Some(t) = self.model.algo.poll_timeout() {
            if t <= now {
                let t = self.clock(t);
                self.model.advance(t, &mut Inline);
                let backlog = self.model.waiting_bytes();
                self.model.algo.on_timeout(t, backlog);
            }
        }
    }

    /// Packets and bytes waiting at `now` (transmission not started).
    pub fn backlog(&mut self, now: Time) -> (u64, u64) {
        self.model.advance(now, &mut Inline);
        (self.model.waiting_packets(), self.model.waiting_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::algorithms::droptail::{DropTail, DropTailConfig};

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
            ctrl: 0,
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
}
