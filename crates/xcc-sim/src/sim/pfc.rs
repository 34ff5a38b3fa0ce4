//! `[pfc]` on the packet engine: a lossless fabric (docs/algorithms/pfc.md).
//!
//! Every packet a router queues on one of its links is charged to the link it came in on
//! ([`PfcFabric`]) until its transmission starts. The link model reports starts lazily, so a
//! link that leaves a router with charged packets waiting keeps one `PfcDeparture` event at its
//! next start: each start is seen at its own time, and the XON it may cause leaves then. A
//! frame (XOFF or XON) goes up the ingress link at once (it does not queue behind data, as MAC
//! control frames) and reaches that link's transmitter after its propagation delay and a 64 B
//! frame's serialisation (`PfcFrame` event), which then holds or re-times its waiting packets
//! (`xcc_core::link::model`'s `pause` / `resume`).

use std::collections::VecDeque;

use xcc_build::pfc::{switch_ports, Pfc};
use xcc_core::algorithms::pfc::PfcFrame;
use xcc_core::link::pfc_fabric::{FrameOut, PfcFabric, FRAME_BYTES};
use xcc_core::{Dur, Time};

use super::{Event, Simulation};
use crate::link::Slot;
use crate::output::{Table, TableBuilder};
use crate::scenario::model::Scenario;
use crate::topology::Routes;

/// The fabric's state in a run.
pub(super) struct PfcRun {
    fabric: PfcFabric,
    /// Per link: frames on their way up it to its transmitter, oldest first.
    in_flight: Vec<VecDeque<PfcFrame>>,
    /// Per link: the time of its pending `PfcDeparture` event (`Time::NEVER`: none).
    departure_at: Vec<Time>,
    /// Per link: XON frames its far end sent.
    resumes: Vec<u64>,
    frames: Vec<FrameOut>,
}

impl PfcRun {
    /// The fabric of a scenario with `[pfc]` (checked when it was resolved).
    pub(super) fn new(scenario: &Scenario) -> Option<Box<PfcRun>> {
        let pfc: Pfc = scenario.pfc?;
        let links = &scenario.links;
        let (ports, egress) = switch_ports(&scenario.nodes, links);
        let fabric = PfcFabric::new(
            pfc.params_for(&links[0]),
            |l| pfc.params_for(&links[l]).headroom_bytes,
            &ports,
            &egress,
            pfc.mtu_bytes,
        )
        .expect("[pfc] was checked when the scenario was resolved");
        Some(Box::new(PfcRun {
            fabric,
            in_flight: vec![VecDeque::new(); links.len()],
            departure_at: vec![Time::NEVER; links.len()],
            resumes: vec![0; links.len()],
            frames: Vec::new(),
        }))
    }
}

impl Simulation {
    /// The link a packet queued on link `l` as `slot` came in on, if it came through a router.
    fn pfc_ingress(&self, slot: Slot) -> Option<u32> {
        let sp = &self.arena[slot.idx as usize];
        let prev = if sp.ctrl == 0 {
            // A data packet: its item's position; the link before this one in the arena, or the
            // end marker of the route before (this is its first link).
            (slot.pos >= 2).then(|| self.routes.links[slot.pos as usize - 2])
        } else {
            (sp.hop > 0).then(|| self.routes.hop(sp.route, sp.hop - 1))
        };
        prev.filter(|&p| p != Routes::END)
    }

    /// Link `l` queued `slot` at `now` (PFC runs only): charge it, see the starts so far.
    pub(super) fn pfc_queued(&mut self, l: u32, slot: Slot) {
        let Some(mut pfc) = self.pfc.take() else { return };
        if pfc.fabric.tracks(l) {
            let from = self.pfc_ingress(slot);
            let bytes = self.arena[slot.idx as usize].pkt.wire_bytes;
            if let Some(out) = pfc.fabric.charge(self.now, l, from, bytes) {
                pfc.frames.push(out);
            }
            self.pfc_sync(&mut pfc, l);
        }
        self.pfc = Some(pfc);
    }

    /// The `PfcDeparture` event of link `l`: its next waiting packet starts now.
    pub(super) fn on_pfc_departure(&mut self, l: u32) {
        let Some(mut pfc) = self.pfc.take() else { return };
        if pfc.departure_at[l as usize] == self.now {
            pfc.departure_at[l as usize] = Time::NEVER;
        }
        self.links[l as usize].advance(self.now, &mut self.arena[..]);
        self.pfc_sync(&mut pfc, l);
        self.pfc = Some(pfc);
    }

    /// A frame reaches the transmitter of link `l`.
    pub(super) fn on_pfc_frame(&mut self, l: u32) {
        let Some(mut pfc) = self.pfc.take() else { return };
        let frame = pfc.in_flight[l as usize].pop_front().expect("a frame in flight");
        let link = &mut self.links[l as usize];
        match frame {
            PfcFrame::Pause => link.pause(self.now, &mut self.arena[..]),
            PfcFrame::Resume => {
                if link.resume(self.now, &mut self.arena[..]) {
                    let t = link.next_delivery().expect("the resumed head");
                    self.queue.schedule(t, Event::LinkDeliver(l));
                }
            }
        }
        // XON may start a packet now; either frame moves this link's next start.
        if pfc.fabric.tracks(l) {
            self.pfc_sync(&mut pfc, l);
        }
        self.pfc = Some(pfc);
    }

    /// Releases the charges of link `l`'s packets started by now, sends the frames due, and
    /// keeps one event at its next start.
    fn pfc_sync(&mut self, pfc: &mut PfcRun, l: u32) {
        let link = &self.links[l as usize];
        pfc.fabric.departed(self.now, l, link.stats.packets_out, &mut pfc.frames);
        if let Some(next) = link.next_start().filter(|_| pfc.fabric.pending(l) > 0) {
            if pfc.departure_at[l as usize] != next {
                pfc.departure_at[l as usize] = next;
                self.queue.schedule(next, Event::PfcDeparture(l));
            }
        }
        for out in pfc.frames.drain(..) {
            let up = &self.links[out.link as usize];
            let frame_ns = FRAME_BYTES as u64 * 8_000_000_000 / up.rate_bps;
            pfc.in_flight[out.link as usize].push_back(out.frame);
            if out.frame == PfcFrame::Resume {
                pfc.resumes[out.link as usize] += 1;
            }
            self.queue.schedule(self.now + up.delay + Dur(frame_ns), Event::PfcFrame(out.link));
        }
    }

    /// The end-of-run check of a lossless fabric: no packet dropped by a router's link, no
    /// port past its pause threshold plus headroom.
    pub(super) fn check_lossless(&self) -> Result<(), String> {
        let Some(pfc) = &self.pfc else { return Ok(()) };
        for (i, l) in self.links.iter().enumerate() {
            if pfc.fabric.tracks(i as u32) && l.stats.drops > 0 {
                return Err(format!(
                    "[pfc] is enabled but link {} dropped {} packets: the fabric was not lossless",
                    self.scenario.links[i].name, l.stats.drops
                ));
            }
            if pfc.fabric.pending(i as u32) as u64 != l.waiting_packets() && pfc.fabric.tracks(i as u32) {
                return Err(format!(
                    "link {}: {} PFC charges for {} waiting packets",
                    self.scenario.links[i].name,
                    pfc.fabric.pending(i as u32),
                    l.waiting_packets()
                ));
            }
        }
        if pfc.fabric.overflows() > 0 {
            return Err(format!(
                "[pfc]: {} arrivals passed a port's pause threshold plus headroom",
                pfc.fabric.overflows()
            ));
        }
        Ok(())
    }

    /// One row per router ingress port: its pause frames and its transmitter's time paused.
    pub(super) fn pfc_table(&self) -> Table {
        let Some(pfc) = &self.pfc else { return Table::default() };
        let mut t = TableBuilder::for_table("pfc_ports");
        for (i, m) in self.scenario.links.iter().enumerate() {
            let Some(port) = pfc.fabric.port(i as u32) else { continue };
            let link = &self.links[i];
            t.i64("link_id", i as i64)
                .str("name", &m.name)
                .str("switch", &self.scenario.nodes[m.to as usize].name)
                .i64("pause_frames", port.pause_frames() as i64)
                .i64("resume_frames", pfc.resumes[i] as i64)
                .f64("switch_paused_s", port.paused_time(self.end).as_secs_f64())
                .f64("paused_s", link.paused_ns(self.end) as f64 * 1e-9)
                .i64("headroom_bytes", port_headroom(self, i) as i64);
        }
        t.finish()
    }
}

fn port_headroom(sim: &Simulation, l: usize) -> u64 {
    let pfc = sim.scenario.pfc.expect("a PFC run");
    pfc.params_for(&sim.scenario.links[l]).headroom_bytes
}
