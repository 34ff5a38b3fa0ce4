//! An INT-capable egress port (`int = true` on a link): every data packet that carries an INT
//! header ([`CongestionHeader::Int`]) gets this port's record appended as its transmission
//! starts, whatever the link's queue discipline. INT is orthogonal to the queue: HPCC and
//! PowerTCP run over drop-tail (or PFC) ports that only stamp telemetry, as in the authors'
//! ns-3 switch (`SwitchNode::SwitchNotifyDequeue`, `switch-node.cc`), so the stamp sits in the
//! link model beside the algorithm's dequeue hook, not in a queue kind.
//!
//! The record is [`IntPort::on_departure`]'s: the backlog the packet leaves behind, the bytes
//! the port sent before it (every packet counts, ACKs included), the start of its
//! transmission and the line rate.

use crate::algorithms::int::IntPort;
use crate::packet::Packet;
use crate::time::Time;
use crate::wire::CongestionHeader;

/// One link direction's INT stamping.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IntStamp {
    port: IntPort,
}

impl IntStamp {
    /// The stamp of a port of `rate_bps`.
    pub fn new(rate_bps: u64) -> IntStamp {
        IntStamp { port: IntPort::new(rate_bps as f64) }
    }

    /// `pkt` starts its transmission at `start`, leaving `backlog_bytes` waiting.
    #[inline]
    pub fn on_departure(&mut self, start: Time, pkt: &mut Packet, backlog_bytes: u64) {
        let is_data = pkt.is_data();
        let int = match &mut pkt.cc {
            CongestionHeader::Int(h) if is_data => Some(h),
            _ => None,
        };
        self.port.on_departure(start, pkt.wire_bytes, backlog_bytes, int);
    }

    /// Bytes this port has transmitted (every packet).
    pub fn tx_bytes(&self) -> u64 {
        self.port.tx_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::droptail::DropTail;
    use crate::algorithms::int::{IntHeader, IntHop};
    use crate::link::model::{Inline, LinkModel};
    use crate::link::AnyLinkAlgorithm;
    use crate::rng::component_rng;
    use crate::time::Dur;
    use crate::wire::{Segment, SegmentKind};

    #[derive(Copy, Clone, Debug)]
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

    fn packet(kind: SegmentKind, bytes: u32, int: bool) -> Item {
        let cc = if int { CongestionHeader::Int(IntHeader::new(5).unwrap()) } else { CongestionHeader::None };
        Item(Packet { wire_bytes: bytes, seg: Segment { kind, ..Segment::default() }, cc, ..Packet::default() })
    }

    fn hops(p: &Packet) -> Vec<IntHop> {
        match &p.cc {
            CongestionHeader::Int(h) => h.hops().to_vec(),
            _ => vec![],
        }
    }

    // A 100 Gbit/s link (1,000 B take 80 ns), INT on. At t = 0 three packets arrive in turn:
    // data A (1,000 B) starts at once, nothing waiting and nothing sent before it; an ACK (100
    // B, carrying an INT header: echoed records are never stamped) starts at 80 ns with B
    // waiting; data B starts at 88 ns with nothing behind it and 1,100 B sent before it. A
    // link without INT leaves the header alone.
    #[test]
    fn the_link_stamps_data_at_transmission_start_and_counts_every_packet() {
        let algo = AnyLinkAlgorithm::DropTail(DropTail {});
        let mut link: LinkModel<Item> =
            LinkModel::new(100_000_000_000, Dur::from_us(1), 100, u64::MAX, algo, component_rng(1, 0, 0));
        link.enable_int();
        let (a, ack, b) = (
            packet(SegmentKind::Data, 1000, true),
            packet(SegmentKind::Ack, 100, true),
            packet(SegmentKind::Data, 1000, true),
        );
        for p in [a, ack, b] {
            link.offer(Time::ZERO, p, &mut Inline);
        }
        let mut out = vec![];
        while let Some(t) = link.next_delivery() {
            out.push(link.deliver(t, &mut Inline).0);
        }
        let rec = |q, tx, ts| IntHop { queue_bytes: q, tx_bytes: tx, timestamp_ns: ts, line_rate_kbps: 100_000_000 };
        assert_eq!(hops(&out[0]), vec![rec(0, 0, 0)]);
        assert!(hops(&out[1]).is_empty(), "ACKs are not stamped");
        assert_eq!(hops(&out[2]), vec![rec(0, 1100, 88)]);

        let mut plain: LinkModel<Item> =
            LinkModel::new(100_000_000_000, Dur::from_us(1), 100, u64::MAX, algo_droptail(), component_rng(1, 0, 0));
        plain.offer(Time::ZERO, packet(SegmentKind::Data, 1000, true), &mut Inline);
        let t = plain.next_delivery().unwrap();
        assert!(hops(&plain.deliver(t, &mut Inline).0).is_empty());
    }

    fn algo_droptail() -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::DropTail(DropTail {})
    }
}
