//! PFC at the switches (IEEE 802.1Qbb), as a driver runs it over its links: every packet a
//! PFC switch forwards is charged to the port it came in through (the directed link that
//! delivered it, [`PfcIngress`]) until its transmission starts on the way out; a port whose
//! charge passes the pause threshold sends XOFF up that link, and XON when it falls back to
//! the resume threshold. One lossless priority: every packet is in it (802.1Qbb's eight
//! classes are not modelled; a single class is what the HPCC and DCQCN runs put data in).
//!
//! Sans-IO, over link indices: the driver tells it what it queued at a switch's egress link
//! ([`PfcFabric::charge`]) and how many packets of that link have started so far
//! ([`PfcFabric::departed`]: links are FIFO, so the charges leave in order), and carries the
//! frames it returns up the ingress link (propagation delay plus a 64 B frame's serialisation).

use std::collections::VecDeque;

use crate::algorithms::pfc::{PfcFrame, PfcIngress, PfcParams};
use crate::time::Time;

/// A charge whose packet did not come through a PFC port (injected, or a session's control).
const UNCHARGED: u32 = u32::MAX;

/// The bytes of a PFC frame on the wire (an 802.3 MAC control frame, minimum size).
pub const FRAME_BYTES: u32 = 64;

/// A frame for the transmitter of `link` (the ingress link whose port sent it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameOut {
    pub link: u32,
    pub frame: PfcFrame,
}

/// The PFC state of a network.
#[derive(Clone, Debug)]
pub struct PfcFabric {
    /// Per directed link: the ingress accounting at its far end, if that is a PFC switch.
    ingress: Vec<Option<PfcIngress>>,
    /// Per directed link leaving a PFC switch: the charges of its packets not yet started.
    egress: Vec<Option<Egress>>,
    /// Arrivals that passed pause plus headroom (none when the thresholds hold).
    overflows: u64,
}

#[derive(Clone, Debug, Default)]
struct Egress {
    charges: VecDeque<(u32, u32)>,
    /// Packets of the link whose transmission start was seen.
    departed: u64,
}

impl PfcFabric {
    /// `switch_ports[l]`: whether directed link `l` ends at a PFC switch (an ingress port);
    /// `switch_egress[l]`: whether it leaves one. `headroom[l]`: the headroom of the ingress
    /// port at the end of link `l` (links differ in what they have in flight).
    pub fn new(
        params: PfcParams,
        headroom: impl Fn(usize) -> u64,
        switch_ports: &[bool],
        switch_egress: &[bool],
        mtu_bytes: u32,
    ) -> Result<PfcFabric, crate::algorithms::pfc::PfcError> {
        let mut ingress = Vec::with_capacity(switch_ports.len());
        for (l, &port) in switch_ports.iter().enumerate() {
            ingress.push(match port {
                true => Some(PfcIngress::new(PfcParams { headroom_bytes: headroom(l), ..params }, mtu_bytes)?),
                false => None,
            });
        }
        let egress = switch_egress.iter().map(|&e| e.then(Egress::default)).collect();
        Ok(PfcFabric { ingress, egress, overflows: 0 })
    }

    /// Whether packets queued on `link` are charged (it leaves a PFC switch).
    #[inline]
    pub fn tracks(&self, link: u32) -> bool {
        self.egress.get(link as usize).is_some_and(|e| e.is_some())
    }

    /// A packet of `bytes` that came in through `from` (or from no PFC port: `None`) was
    /// queued at `now` on `link`, a tracked link; the XOFF to send, if any.
    pub fn charge(&mut self, now: Time, link: u32, from: Option<u32>, bytes: u32) -> Option<FrameOut> {
        let port = from.filter(|&f| self.ingress[f as usize].is_some());
        let e = self.egress[link as usize].as_mut().expect("a tracked link");
        e.charges.push_back((port.unwrap_or(UNCHARGED), bytes));
        let f = port?;
        match self.ingress[f as usize].as_mut().expect("a PFC port").on_arrival(now, bytes as u64) {
            Ok(frame) => frame.map(|frame| FrameOut { link: f, frame }),
            Err(_) => {
                self.overflows += 1;
                None
            }
        }
    }

    /// `departed_total` packets of `link` have started their transmission by `now`: the new
    /// ones release their charges; the XONs to send go to `out`.
    pub fn departed(&mut self, now: Time, link: u32, departed_total: u64, out: &mut Vec<FrameOut>) {
        let Some(e) = self.egress[link as usize].as_mut() else { return };
        while e.departed < departed_total {
            e.departed += 1;
            let (port, bytes) = e.charges.pop_front().expect("a charge per queued packet");
            if port == UNCHARGED {
                continue;
            }
            if let Some(frame) =
                self.ingress[port as usize].as_mut().expect("a PFC port").on_departure(now, bytes as u64)
            {
                out.push(FrameOut { link: port, frame });
            }
        }
    }

    /// The ingress state at the far end of `link`, if it is a PFC port.
    pub fn port(&self, link: u32) -> Option<&PfcIngress> {
        self.ingress.get(link as usize).and_then(|p| p.as_ref())
    }

    /// Arrivals that passed a port's pause threshold plus headroom.
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    /// Charges still held on `link` (packets queued, not started), for the end-of-run check.
    pub fn pending(&self, link: u32) -> usize {
        self.egress.get(link as usize).and_then(|e| e.as_ref()).map_or(0, |e| e.charges.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Links 0 and 1 end at the switch (ports), link 2 leaves it. Pause above 3,000 B, resume
    // at 1,500 B. Port 0 sends three 1,500 B packets: the third takes it to 4,500 B: XOFF to
    // link 0. Port 1's packet is charged to port 1. Two departures release 3,000 B of port 0:
    // at 1,500 B, XON to link 0.
    #[test]
    fn charges_follow_the_fifo_and_frames_go_up_the_port() {
        let params = PfcParams { pause_bytes: 3_000, resume_bytes: 1_500, headroom_bytes: 3_000 };
        let mut f = PfcFabric::new(params, |_| 3_000, &[true, true, false], &[false, false, true], 1500).unwrap();
        assert!(f.tracks(2) && !f.tracks(0));
        let t = Time(0);
        assert_eq!(f.charge(t, 2, Some(0), 1500), None);
        assert_eq!(f.charge(t, 2, Some(1), 1500), None);
        assert_eq!(f.charge(t, 2, Some(0), 1500), None);
        assert_eq!(f.charge(t, 2, None, 64), None);
        assert_eq!(f.charge(t, 2, Some(0), 1500), Some(FrameOut { link: 0, frame: PfcFrame::Pause }));
        let mut out = Vec::new();
        f.departed(Time(10), 2, 1, &mut out);
        assert!(out.is_empty(), "port 0 at 3,000 B");
        f.departed(Time(20), 2, 3, &mut out);
        assert_eq!(out, vec![FrameOut { link: 0, frame: PfcFrame::Resume }]);
        assert_eq!(f.port(0).unwrap().ingress_bytes(), 1_500);
        assert_eq!(f.port(1).unwrap().ingress_bytes(), 0);
        assert_eq!(f.pending(2), 2);
        assert_eq!(f.port(0).unwrap().paused_time(Time(100)).as_ns(), 20);
    }
}
