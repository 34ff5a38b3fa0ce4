//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-02; Linux `tcp_rate.c`),
//! for controllers that ask for them ([`crate::host::Controller::wants_rate_samples`], BBR).
//!
//! Each transmission snapshots the connection's delivery state: `delivered` (bytes delivered so
//! far), `delivered_time` (when that count last grew), `first_tx_time` (the send time of the
//! packet whose delivery started the current sampling interval) and whether the sender was
//! application-limited. When a packet is delivered (cumulatively ACKed or SACKed, once), the
//! most recently *sent* delivered packet of the ACK gives the sample:
//!
//! ```text
//! delivered = C.delivered - P.delivered
//! interval  = max(P.sent_time - P.first_tx_time, now - P.delivered_time)
//! ```
//!
//! (the send and the ACK interval, the larger so ACK compression cannot inflate the rate); an
//! interval shorter than the minimum RTT is not a valid sample (draft section 3.3, Linux
//! `tcp_rate_gen`). The sender is application-limited when it has no data to send, nothing to
//! retransmit and room in its window (`tcp_rate_check_app_limited`); that mark lasts until the
//! data in flight then is delivered, and samples of packets sent meanwhile carry it.
//!
//! The snapshots live in a ring parallel to the sender's scoreboard (entry `i` is segment
//! `snd_una + i`), allocated only for controllers that want samples: window-based flows pay one
//! branch per ACK and per send.

use std::collections::VecDeque;

use crate::time::{Dur, Time};

/// One ACK's delivery-rate sample and loss accounting (Linux's `struct rate_sample`), in bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RateSample {
    /// False when no delivered packet had a snapshot or the interval was shorter than the
    /// minimum RTT: `delivered` and `interval` then mean nothing.
    pub valid: bool,
    /// Bytes delivered over `interval`.
    pub delivered: u64,
    /// The sampling interval.
    pub interval: Dur,
    /// `P.delivered`: the connection's delivered count when the sampled packet left (BBR's
    /// packet-timed rounds compare it with the count at the round's start).
    pub prior_delivered: u64,
    /// The connection's delivered count after this ACK.
    pub delivered_total: u64,
    /// When the delivered count last grew (`tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// The sampled packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// Bytes newly delivered by this ACK (cumulatively ACKed or SACKed).
    pub acked_sacked: u64,
    /// Bytes newly marked lost while processing this ACK.
    pub losses: u64,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// The sender is retransmitting after a timeout and has not yet got back to where it was
    /// when the timer fired (Linux's `TCP_CA_Loss` state).
    pub rto_recovery: bool,
}

/// The delivery state a transmission snapshots.
#[derive(Copy, Clone, Debug, Default)]
struct Snapshot {
    delivered: u64,
    delivered_time: Time,
    first_tx_time: Time,
    sent_time: Time,
    app_limited: bool,
    /// Not yet delivered (a segment counts once, when first SACKed or ACKed).
    pending: bool,
}

/// The per-connection estimator.
#[derive(Debug, Clone)]
pub(crate) struct RateSampler {
    snaps: VecDeque<Snapshot>,
    delivered: u64,
    delivered_time: Time,
    first_tx_time: Time,
    /// Application-limited until `delivered` exceeds this (0: not limited).
    app_limited: u64,
    lost: u64,
    // The ACK being processed.
    lost_before: u64,
    delivered_before: u64,
    prior_in_flight: u64,
    best: Option<Snapshot>,
    best_seq: u32,
}

impl RateSampler {
    pub(crate) fn new(now: Time) -> RateSampler {
        RateSampler {
            snaps: VecDeque::with_capacity(64),
            delivered: 0,
            delivered_time: now,
            first_tx_time: now,
            app_limited: 0,
            lost: 0,
            lost_before: 0,
            delivered_before: 0,
            prior_in_flight: 0,
            best: None,
            best_seq: 0,
        }
    }

    /// Segment `snd_una + index` left at `now` (`new`: first transmission, appended;
    /// `nothing_out`: no segment was outstanding before it).
    pub(crate) fn on_sent(&mut self, now: Time, index: usize, new: bool, nothing_out: bool) {
        if nothing_out {
            // A new sampling interval starts with this flight (tcp_rate_skb_sent).
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        let s = Snapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_tx_time: self.first_tx_time,
            sent_time: now,
            app_limited: self.app_limited != 0,
            pending: true,
        };
        if new {
            self.snaps.push_back(s);
        } else if let Some(e) = self.snaps.get_mut(index) {
            *e = s;
        }
    }

    /// An ACK arrives with `in_flight` bytes outstanding.
    pub(crate) fn begin_ack(&mut self, in_flight: u64) {
        self.lost_before = self.lost;
        self.delivered_before = self.delivered;
        self.prior_in_flight = in_flight;
        self.best = None;
    }

    /// Segment `seq` (`snd_una + index`, `bytes` of payload) was delivered: SACKed, or
    /// cumulatively ACKed without having been SACKed.
    pub(crate) fn on_delivered(&mut self, index: usize, seq: u32, bytes: u64) {
        let Some(s) = self.snaps.get_mut(index) else { return };
        if !s.pending {
            return;
        }
        s.pending = false;
        let s = *s;
        self.delivered += bytes;
        // The most recently sent delivered packet gives the sample (tcp_rate_skb_delivered).
        let newer = match self.best {
            None => true,
            Some(b) => s.sent_time > b.sent_time || (s.sent_time == b.sent_time && seq > self.best_seq),
        };
        if newer {
            self.best = Some(s);
            self.best_seq = seq;
            self.first_tx_time = s.sent_time;
        }
    }

    /// Drops the snapshots of `n` segments the cumulative ACK passed (after `on_delivered`).
    pub(crate) fn advance(&mut self, n: usize) {
        self.snaps.drain(..n.min(self.snaps.len()));
    }

    /// Bytes newly presumed lost.
    pub(crate) fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// The sender had nothing to send with room in its window and nothing to retransmit.
    pub(crate) fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// The sample of the ACK being processed (`tcp_rate_gen`).
    pub(crate) fn generate(&mut self, now: Time, min_rtt: Dur, rto_recovery: bool) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let acked_sacked = self.delivered - self.delivered_before;
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let mut rs = RateSample {
            delivered_total: self.delivered,
            delivered_time: self.delivered_time,
            acked_sacked,
            losses: self.lost - self.lost_before,
            prior_in_flight: self.prior_in_flight,
            rto_recovery,
            ..RateSample::default()
        };
        let Some(p) = self.best else { return rs };
        rs.prior_delivered = p.delivered;
        rs.is_app_limited = p.app_limited;
        rs.delivered = self.delivered - p.delivered;
        let send = p.sent_time.saturating_since(p.first_tx_time);
        let ack = now.saturating_since(p.delivered_time);
        rs.interval = send.max(ack);
        rs.valid = rs.interval >= min_rtt && rs.interval > Dur::ZERO;
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    // A flight of 10 segments of 1000 B sent at 0..9 ms; ACKs at 100..109 ms, one each.
    // The ACK of segment i samples delivered (i + 1) * 1000 B over max(send i ms, ack
    // 100 + i ms since the interval start at 0) = (100 + i) ms; min RTT 100 ms.
    #[test]
    fn one_flight_gives_delivered_over_ack_interval() {
        let mut r = RateSampler::new(Time::ZERO);
        for i in 0..10u32 {
            r.on_sent(ms(i as u64), i as usize, true, i == 0);
        }
        let mut last = RateSample::default();
        for i in 0..10u32 {
            r.begin_ack(0);
            r.on_delivered(0, i, 1000);
            r.advance(1);
            last = r.generate(ms(100 + i as u64), Dur::from_ms(100), false);
            assert!(last.valid);
            // Every packet of the flight snapshotted delivered = 0.
            assert_eq!(last.delivered, (i as u64 + 1) * 1000);
        }
        assert_eq!(last.delivered_total, 10_000);
        assert_eq!(last.prior_delivered, 0);
        // The last ACK: 10 segments over max(send 9 ms, ACK 109 ms) = 109 ms.
        assert_eq!(last.interval, Dur::from_ms(109));
    }

    // An interval shorter than the min RTT is invalid; app-limited marks the packets sent
    // while it lasts and ends once the data in flight at marking time is delivered.
    #[test]
    fn short_intervals_are_invalid_and_app_limited_is_marked() {
        let mut r = RateSampler::new(Time::ZERO);
        r.on_sent(ms(0), 0, true, true);
        r.begin_ack(0);
        r.on_delivered(0, 0, 1000);
        r.advance(1);
        let s = r.generate(ms(50), Dur::from_ms(100), false);
        assert!(!s.valid);
        r.mark_app_limited(0);
        r.on_sent(ms(60), 0, true, true);
        r.begin_ack(0);
        r.on_delivered(0, 1, 1000);
        r.advance(1);
        let s = r.generate(ms(200), Dur::from_ms(100), false);
        assert!(s.is_app_limited && s.valid);
        r.on_sent(ms(200), 0, true, true);
        assert!(!r.snaps[0].app_limited, "delivered 2000 > mark 1000: no longer limited");
        // Losses and delivered bytes per ACK.
        r.begin_ack(1000);
        r.on_lost(1000);
        let s = r.generate(ms(210), Dur::from_ms(100), true);
        assert_eq!((s.losses, s.acked_sacked, s.prior_in_flight, s.rto_recovery), (1000, 0, 1000, true));
        // A SACKed segment counts once: its later cumulative ACK delivers nothing new.
        r.begin_ack(0);
        r.on_delivered(0, 2, 1000);
        r.on_delivered(0, 2, 1000);
        assert_eq!(r.generate(ms(300), Dur::from_ms(100), false).acked_sacked, 1000);
    }
}
