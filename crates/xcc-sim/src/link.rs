//! The simulator's links: the core link model ([`xcc_core::link::model`]) carrying indices into
//! the simulator's packet arena.

use xcc_core::link::model::{LinkModel, PacketStore, Packets};
use xcc_core::Packet;

use crate::topology::{Route, Routes};

/// A packet in the simulator: the core packet plus where it is on its route.
#[derive(Copy, Clone, Debug, Default)]
pub struct SimPacket {
    pub pkt: Packet,
    pub route: Route,
    /// Index in `route` of the link the packet is on (or about to enter). Kept for the packets
    /// that take the slow path at every hop (control packets); a data packet's position
    /// travels in its [`Slot`] instead and this stays at its value on injection.
    pub hop: u32,
    /// A session protocol's control packet: its body's handle in the group plus one; 0 for
    /// every other packet.
    pub ctrl: u32,
}

/// What a simulator link carries: the index of a packet in the arena, and what its next hop
/// needs, so that a data packet crosses a router without touching its arena slot (at large
/// scale that slot is a cache miss on every hop, in a chain of misses: link, pipe, packet,
/// route, next link).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub idx: u32,
    /// The link after this one on the packet's route, or [`Routes::END`] when the packet needs
    /// the simulation at the end of this link: its last link, or a control packet.
    pub next: u32,
    /// Position of `next` in [`Routes::links`].
    pub pos: u32,
    /// The packet's `wire_bytes`, with [`Slot::DATA`] set for a data segment.
    meta: u32,
    /// The packet's flow, to prefetch its record before the packet reaches its host (free:
    /// the pipe entry's padding).
    pub flow: u32,
}

impl Slot {
    const DATA: u32 = 1 << 31;

    /// The item for packet `sp` at arena index `idx`, on the link at position `pos - 1` of
    /// `routes`; `next` is [`Routes::END`] for a packet whose every hop takes the slow path.
    #[inline(always)]
    pub fn new(idx: u32, sp: &SimPacket, next: u32, pos: u32) -> Slot {
        debug_assert!(sp.pkt.wire_bytes < Self::DATA);
        let data = if sp.pkt.is_data() { Self::DATA } else { 0 };
        Slot { idx, next, pos, meta: sp.pkt.wire_bytes | data, flow: sp.pkt.flow.0 }
    }

    /// The same packet on the next link of its route (`routes` gives the one after).
    #[inline(always)]
    pub fn advanced(self, routes: &Routes) -> Slot {
        let pos = self.pos + 1;
        Slot { next: routes.at(pos), pos, ..self }
    }
}

/// A directed link of the simulator.
pub type SimLink = LinkModel<Slot>;

impl Packets<Slot> for [SimPacket] {
    #[inline(always)]
    fn packet<'a>(&'a self, item: &'a Slot) -> &'a Packet {
        &self[item.idx as usize].pkt
    }
    #[inline(always)]
    fn packet_mut<'a>(&'a mut self, item: &'a mut Slot) -> &'a mut Packet {
        &mut self[item.idx as usize].pkt
    }
    #[inline(always)]
    fn wire_bytes(&self, item: &Slot) -> u32 {
        item.meta & !Slot::DATA
    }
    #[inline(always)]
    fn is_data(&self, item: &Slot) -> bool {
        item.meta & Slot::DATA != 0
    }
}

impl PacketStore<Slot> for [SimPacket] {
    type Rest<'a> = ArenaWithout<'a>;
    #[inline(always)]
    fn split<'a>(&'a mut self, item: &'a mut Slot) -> (&'a mut Packet, ArenaWithout<'a>) {
        let (before, rest) = self.split_at_mut(item.idx as usize);
        let (slot, after) = rest.split_first_mut().expect("packet index in arena");
        (&mut slot.pkt, ArenaWithout { before, after, split: item.idx })
    }
}

/// The arena without one packet (the one arriving at a link): `before` ends and `after` starts
/// around index `split`.
pub struct ArenaWithout<'a> {
    before: &'a mut [SimPacket],
    after: &'a mut [SimPacket],
    split: u32,
}

impl Packets<Slot> for ArenaWithout<'_> {
    #[inline(always)]
    fn packet<'a>(&'a self, item: &'a Slot) -> &'a Packet {
        if item.idx < self.split {
            &self.before[item.idx as usize].pkt
        } else {
            &self.after[(item.idx - self.split - 1) as usize].pkt
        }
    }
    #[inline(always)]
    fn packet_mut<'a>(&'a mut self, item: &'a mut Slot) -> &'a mut Packet {
        if item.idx < self.split {
            &mut self.before[item.idx as usize].pkt
        } else {
            &mut self.after[(item.idx - self.split - 1) as usize].pkt
        }
    }
}
