//! The resource-management (RM) cell of ATM ABR as ERICA and BFYZ use it (ATM TM 4.0, reduced
//! to the fields these switch algorithms read): the source's current rate `CCR` and the
//! explicit rate `ER` that switches lower on the way. The direction (forward / backward RM
//! cell) is where the packet travels ([`super::Direction`]); a `Close` cell tears the
//! session's state down at every link (ATM's connection release, which ABR switches that keep
//! per-VC state rely on).

use super::ControlPacket;

/// What an RM cell is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RmKind {
    /// A rate-management cell: forward it carries CCR, it comes back with ER.
    Rm,
    /// The session is gone: links forget it; the destination drops the cell.
    Close,
}

/// One RM cell. Rates in bit/s.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RmCell {
    pub kind: RmKind,
    /// Current cell rate: the rate the source is sending at (0 before it has one).
    pub ccr: f64,
    /// Explicit rate: starts at the source's demand (PCR), each link may only lower it.
    pub er: f64,
}

impl RmCell {
    /// Size on the wire: one 53-byte ATM cell (header + 48-byte payload).
    pub const WIRE_BYTES: u32 = 53;
}

impl ControlPacket for RmCell {
    /// Forward RM cells turn around; Close cells end here.
    fn at_destination(self) -> Option<RmCell> {
        match self.kind {
            RmKind::Rm => Some(self),
            RmKind::Close => None,
        }
    }

    fn wire_bytes(&self) -> u32 {
        RmCell::WIRE_BYTES
    }
}
