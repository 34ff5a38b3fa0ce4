//! Connection set-up on the sender's side: SYN, its retransmission, and what the SYN-ACK brings.
//!
//! ```text
//!  sender (connecting)                 receiver (listening)
//!  SYN  [ECE CWR if ECN] [cc stamp] ─▶
//!                                    ◀─ SYN-ACK [ECE if ECN and the SYN asked] [cc echo]
//!  data #0 (carries the handshake's ACK) ─▶
//! ```
//!
//! - **SYN** (RFC 9293 section 3.5): a payload-less data-direction segment with `Flags::SYN`,
//!   outside the sequence space like a probe, Not-ECT (RFC 3168 section 6.1.1), stamped by the
//!   controller's [`crate::host::Controller::stamp_syn`]: MaxNet asks for MaxStart's spare
//!   capacity (or the price) there, so the SYN-ACK brings it back and the first data segments
//!   leave at that rate one RTT after the SYN (seed 000, Section IV-B). Queues see it as any
//!   other packet: RED may drop it, and since it is Not-ECT it is dropped where ECT data would
//!   be marked.
//! - **Retransmission** (RFC 6298 sections 2.1 and 5.5): after the initial RTO (1 s; 3 s, RFC
//!   2988's value, for the papers' era), doubled at each expiry.
//! - **SYN-ACK**: its echoed timestamp is the RTT sample of the SYN it answers (RFC 7323 makes it
//!   unambiguous even after retransmissions), so the data starts with an RTT estimate; its
//!   congestion header goes to the controller as any ACK's; ECE on it completes ECN negotiation
//!   (RFC 3168 section 6.1.1).
//! - **ACK**: the third segment rides on the first data segment (RFC 9293 allows data on it);
//!   Linux sends a separate pure ACK first, which costs one header-sized packet and no time.
//! - **FIN**: the last segment of a sized flow carries `Flags::FIN` (an HTTP/1.0 server writes
//!   its response and closes, and Linux then sends the FIN on the last segment); the receiver's
//!   ACK of it carries FIN too (its own close). Retransmitting the segment retransmits the FIN,
//!   so tear-down needs no timer of its own.

use crate::time::{Dur, Time};

/// The sender's connection state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Connect {
    /// Connected before the flow starts (ns-2's one-way agents): no SYN.
    Open,
    /// Waiting for the SYN-ACK. `due`: a SYN must leave now (first one, or its timer expired).
    SynSent {
        due: bool,
        /// SYNs sent so far.
        sent: u32,
        /// When the current SYN's timer expires.
        deadline: Option<Time>,
        /// The RTO of the next SYN (doubled at each expiry).
        rto: Dur,
    },
    /// The SYN-ACK arrived: data flows.
    Established,
}

impl Connect {
    /// The state a new sender starts in: `Open`, or a SYN to send with initial RTO `rto`.
    pub fn new(handshake: bool, rto: Dur) -> Connect {
        if handshake {
            Connect::SynSent { due: true, sent: 0, deadline: None, rto }
        } else {
            Connect::Open
        }
    }

    /// True while data must wait for the SYN-ACK.
    #[inline]
    pub fn pending(&self) -> bool {
        matches!(self, Connect::SynSent { .. })
    }

    /// True if a SYN is to leave now.
    pub fn syn_due(&self) -> bool {
        matches!(self, Connect::SynSent { due: true, .. })
    }

    /// A SYN left at `now`: arms its timer. Returns true if it is a retransmission.
    pub fn on_syn_sent(&mut self, now: Time) -> bool {
        if let Connect::SynSent { due, sent, deadline, rto } = self {
            *due = false;
            *sent += 1;
            *deadline = Some(now + *rto);
            *sent > 1
        } else {
            false
        }
    }

    /// The SYN timer's deadline, while one is armed.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Connect::SynSent { deadline, .. } => *deadline,
            _ => None,
        }
    }

    /// Timer expiry; returns true if the SYN timed out (a SYN is then due, with the RTO
    /// doubled up to `max_rto`). Early or repeated calls do nothing.
    pub fn on_timeout(&mut self, now: Time, max_rto: Dur) -> bool {
        match self {
            Connect::SynSent { due, deadline: Some(t), rto, .. } if *t <= now => {
                *due = true;
                *rto = Dur(rto.0.saturating_mul(2)).min(max_rto);
                true
            }
            _ => false,
        }
    }

    /// The SYN-ACK arrived; returns false if none was awaited (a duplicate SYN-ACK).
    pub fn on_syn_ack(&mut self) -> bool {
        if self.pending() {
            *self = Connect::Established;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Time {
        Time::ZERO + Dur::from_secs(x)
    }

    //  t=0 SYN (RTO 1 s) │ t=1 expiry: SYN again, RTO 2 s │ t=3 expiry: RTO 4 s │ SYN-ACK
    #[test]
    fn syn_backs_off_exponentially_until_the_syn_ack() {
        let max = Dur::from_secs(60);
        let mut c = Connect::new(true, Dur::from_secs(1));
        assert!(c.pending() && c.syn_due());
        assert!(!c.on_syn_sent(s(0)), "the first SYN is no retransmission");
        assert_eq!(c.poll_timeout(), Some(s(1)));
        assert!(!c.on_timeout(Time(s(1).0 - 1), max), "early: nothing");
        assert!(c.on_timeout(s(1), max));
        assert!(c.syn_due());
        assert!(c.on_syn_sent(s(1)));
        assert_eq!(c.poll_timeout(), Some(s(3)));
        assert!(!c.on_timeout(s(1), max), "repeated: nothing");
        assert!(c.on_timeout(s(3), max));
        assert!(c.on_syn_sent(s(3)));
        assert_eq!(c.poll_timeout(), Some(s(7)));
        assert!(c.on_syn_ack());
        assert_eq!((c, c.poll_timeout()), (Connect::Established, None));
        assert!(!c.on_syn_ack(), "a duplicate SYN-ACK changes nothing");
    }

    #[test]
    fn backoff_is_capped_and_open_connections_have_no_syn() {
        let mut c = Connect::new(true, Dur::from_secs(3));
        c.on_syn_sent(s(0));
        assert!(c.on_timeout(s(3), Dur::from_secs(5)));
        c.on_syn_sent(s(3));
        assert_eq!(c.poll_timeout(), Some(s(8)), "6 s capped at max_rto 5 s");
        let o = Connect::new(false, Dur::from_secs(1));
        assert!(!o.pending() && !o.syn_due() && o.poll_timeout().is_none());
    }
}
