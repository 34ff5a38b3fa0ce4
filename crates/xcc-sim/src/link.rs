//! The simulator's links: the core link model ([`xcc_core::link::model`]) carrying indices into
//! the simulator's packet arena.

use xcc_core::link::model::{LinkModel, PacketStore};
use xcc_core::Packet;

use crate::topology::Route;

/// A packet in the simulator: the core packet plus where it is on its route.
#[derive(Copy, Clone, Debug, Default)]
pub struct SimPacket {
    pub pkt: Packet,
    pub route: Route,
    /// Index in `route` of the link the packet is on (or about to enter).
    pub hop: u32,
}

/// What a simulator link carries: the index of a packet in the arena.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slot(pub u32);

/// A directed link of the simulator.
pub type SimLink = LinkModel<Slot>;

impl PacketStore<Slot> for [SimPacket] {
    #[inline(always)]
    fn packet<'a>(&'a self, item: &'a Slot) -> &'a Packet {
        &self[item.0 as usize].pkt
    }
    #[inline(always)]
    fn packet_mut<'a>(&'a mut self, item: &'a mut Slot) -> &'a mut Packet {
        &mut self[item.0 as usize].pkt
    }
}
