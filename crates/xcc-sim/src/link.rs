//! The simulator's links: the core link model ([`xcc_core::link::model`]) carrying indices into
//! the simulator's packet arena.

use xcc_core::link::model::{LinkModel, PacketStore, Packets};
use xcc_core::Packet;

use crate::topology::Route;

/// A packet in the simulator: the core packet plus where it is on its route.
#[derive(Copy, Clone, Debug, Default)]
pub struct SimPacket {
    pub pkt: Packet,
    pub route: Route,
    /// Index in `route` of the link the packet is on (or about to enter).
    pub hop: u32,
    /// A session protocol's control packet: its body's handle in the group plus one; 0 for
    /// every other packet.
    pub ctrl: u32,
}

/// What a simulator link carries: the index of a packet in the arena.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slot(pub u32);

/// A directed link of the simulator.
pub type SimLink = LinkModel<Slot>;

impl Packets<Slot> for [SimPacket] {
    #[inline(always)]
    fn packet<'a>(&'a self, item: &'a Slot) -> &'a Packet {
        &self[item.0 as usize].pkt
    }
    #[inline(always)]
    fn packet_mut<'a>(&'a mut self, item: &'a mut Slot) -> &'a mut Packet {
        &mut self[item.0 as usize].pkt
    }
}

impl PacketStore<Slot> for [SimPacket] {
    type Rest<'a> = ArenaWithout<'a>;
    #[inline(always)]
    fn split<'a>(&'a mut self, item: &'a mut Slot) -> (&'a mut Packet, ArenaWithout<'a>) {
        let (before, rest) = self.split_at_mut(item.0 as usize);
        let (slot, after) = rest.split_first_mut().expect("packet index in arena");
        (&mut slot.pkt, ArenaWithout { before, after, split: item.0 })
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
        if item.0 < self.split {
            &self.before[item.0 as usize].pkt
        } else {
            &self.after[(item.0 - self.split - 1) as usize].pkt
        }
    }
    #[inline(always)]
    fn packet_mut<'a>(&'a mut self, item: &'a mut Slot) -> &'a mut Packet {
        if item.0 < self.split {
            &mut self.before[item.0 as usize].pkt
        } else {
            &mut self.after[(item.0 - self.split - 1) as usize].pkt
        }
    }
}
