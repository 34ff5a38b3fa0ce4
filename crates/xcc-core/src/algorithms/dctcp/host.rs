//! DCTCP's sender (RFC 8257 section 3.3, Linux `tcp_dctcp.c`), as a sans-IO state machine.
//!
//! ```text
//! per ACK:            BytesAcked += acked;  if ECE: BytesMarked += acked
//! if SND.UNA ≥ WindowEnd (one window of data acknowledged):
//!                     F = BytesMarked / BytesAcked;  alpha = (1 − g)·alpha + g·F
//!                     WindowEnd = SND.NXT;  BytesAcked = BytesMarked = 0
//! if ECE and not in CWR:
//!                     cwnd = max(cwnd·(1 − alpha/2), 2·MSS);  ssthresh = cwnd;  CWR until SND.NXT
//! else, not in CWR:   slow start cwnd += min(acked, MSS) below ssthresh, else cwnd += MSS·acked/cwnd
//! ```
//!
//! alpha is updated before the cut on the ACK that ends a window (RFC 8257's order; Linux
//! updates alpha in `in_ack_event` before the stack enters CWR). The window does not grow while
//! a cut is being absorbed (Linux's CWR state), and at most one cut happens per window of data
//! (RFC 3168 section 6.1.2). Linux counts alpha in 1/1024 units and, since 5.1, in packets
//! (`delivered_ce/delivered`); this follows RFC 8257 in bytes and in floating point. Loss is
//! not this law's business: the transport's NewReno halving applies (Linux
//! `dctcp_react_to_loss`: half the window).

use super::DctcpParams;

/// What one ACK tells the DCTCP sender.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DctcpAck {
    /// Bytes newly acknowledged.
    pub acked_bytes: u64,
    /// Whether the ACK carried ECN-Echo.
    pub ece: bool,
    /// SND.UNA after this ACK.
    pub snd_una: u64,
    /// SND.NXT when the ACK arrived.
    pub snd_nxt: u64,
}

/// DCTCP sender state; windows in bytes.
#[derive(Clone, Debug)]
pub struct DctcpSender {
    g: f64,
    mss: f64,
    alpha: f64,
    cwnd: f64,
    ssthresh: f64,
    window_end: u64,
    bytes_acked: u64,
    bytes_marked: u64,
    /// CWR lasts while SND.UNA < this.
    cwr_end: Option<u64>,
    windows: u64,
}

impl DctcpSender {
    /// A sender with segments of `mss_bytes`, an initial window of `initial_window_bytes`, and
    /// the first observation window ending at `window_end` (SND.NXT at initialisation, RFC 8257
    /// section 3.3).
    pub fn new(
        params: DctcpParams,
        mss_bytes: u32,
        initial_window_bytes: u64,
        window_end: u64,
    ) -> Result<DctcpSender, String> {
        params.check()?;
        if mss_bytes == 0 {
            return Err("dctcp: the MSS must be at least 1 byte".into());
        }
        let mss = mss_bytes as f64;
        Ok(DctcpSender {
            g: params.g,
            mss,
            alpha: params.initial_alpha,
            cwnd: (initial_window_bytes as f64).max(2.0 * mss),
            ssthresh: f64::INFINITY,
            window_end,
            bytes_acked: 0,
            bytes_marked: 0,
            cwr_end: None,
            windows: 0,
        })
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, ack: DctcpAck) {
        self.bytes_acked += ack.acked_bytes;
        if ack.ece {
            self.bytes_marked += ack.acked_bytes;
        }
        if ack.snd_una >= self.window_end {
            let f = if self.bytes_acked == 0 { 0.0 } else { self.bytes_marked as f64 / self.bytes_acked as f64 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.window_end = ack.snd_nxt;
            self.bytes_acked = 0;
            self.bytes_marked = 0;
            self.windows += 1;
        }
        if matches!(self.cwr_end, Some(end) if ack.snd_una >= end) {
            self.cwr_end = None;
        }
        if self.cwr_end.is_some() || ack.acked_bytes == 0 {
            return;
        }
        if ack.ece {
            self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * self.mss);
            self.ssthresh = self.cwnd;
            self.cwr_end = Some(ack.snd_nxt);
        } else if self.cwnd < self.ssthresh {
            self.cwnd += (ack.acked_bytes as f64).min(self.mss);
        } else {
            self.cwnd += self.mss * ack.acked_bytes as f64 / self.cwnd;
        }
    }

    /// alpha, the estimated fraction of marked bytes.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// cwnd in bytes.
    pub fn window_bytes(&self) -> f64 {
        self.cwnd
    }

    /// ssthresh in bytes (infinite before the first cut).
    pub fn ssthresh_bytes(&self) -> f64 {
        self.ssthresh
    }

    /// Observation windows ended so far.
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Whether a cut is being absorbed (no growth, no second cut).
    pub fn in_cwr(&self) -> bool {
        self.cwr_end.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Acknowledges one window of ten 1000-byte packets starting at `from`, the last `marked`
    /// of them with ECE; SND.NXT stays one window ahead.
    fn window(s: &mut DctcpSender, from: u64, marked: u64) {
        for i in 1..=10 {
            let una = from + i * MSS;
            s.on_ack(DctcpAck { acked_bytes: MSS, ece: i > 10 - marked, snd_una: una, snd_nxt: from + 20 * MSS });
        }
    }

    // g = 1/16, alpha starts at 1; windows of 10 packets with 0, 5, 10, 0 marked:
    //   window  F     alpha
    //   1       0     15/16·1                      = 0.9375
    //   2       0.5   15/16·0.9375 + 1/16·0.5      = 0.91015625
    //   3       1     15/16·0.91015625 + 1/16      = 0.915771484375
    //   4       0     15/16·0.915771484375         = 0.8585357666015625
    // (binary fractions: exact in f64.)
    #[test]
    fn alpha_over_windows() {
        let mut s = DctcpSender::new(DctcpParams::default(), MSS as u32, 10 * MSS, 10 * MSS).unwrap();
        let want = [0.9375, 0.91015625, 0.915771484375, 0.8585357666015625];
        for (w, (marked, alpha)) in [0, 5, 10, 0].into_iter().zip(want).enumerate() {
            let from = w as u64 * 10 * MSS;
            window(&mut s, from, marked);
            assert_eq!(s.windows(), w as u64 + 1);
            assert_eq!(s.alpha(), alpha, "window {}", w + 1);
        }
    }

    // IW = 10 packets, window 1 unmarked: slow start to cwnd = 20,000, alpha = 0.9375.
    // Window 2 = bytes 10,000..30,000 (SND.NXT was 30,000 when window 1 ended):
    //   ack 11 (ECE):  cut once: cwnd = 20,000·(1 − 0.9375/2) = 10,625 = ssthresh; CWR until 30,000
    //   acks 12..29:   ack 12 ECE, the rest not: no second cut, no growth while in CWR
    //   ack 30 (ECE, SND.UNA = 30,000): window 2 ends first: F = 3,000/20,000 = 0.15,
    //                  alpha = 15/16·0.9375 + 1/16·0.15 = 0.88828125;
    //                  CWR is over, so the ECE cuts with the new alpha:
    //                  cwnd = 10,625·(1 − 0.88828125/2) = 5,906.005859375
    #[test]
    fn cut_by_alpha_half_once_per_window() {
        let mut s = DctcpSender::new(DctcpParams::default(), MSS as u32, 10 * MSS, 10 * MSS).unwrap();
        for i in 1..=10 {
            s.on_ack(DctcpAck { acked_bytes: MSS, ece: false, snd_una: i * MSS, snd_nxt: 10 * MSS + i * 2 * MSS });
        }
        assert_eq!(s.window_bytes(), 20_000.0);
        assert_eq!(s.alpha(), 0.9375);
        let ack = |i: u64, ece: bool| DctcpAck { acked_bytes: MSS, ece, snd_una: i * MSS, snd_nxt: 40_000 };
        s.on_ack(DctcpAck { snd_nxt: 30_000, ..ack(11, true) });
        assert_eq!(s.window_bytes(), 10_625.0);
        assert_eq!(s.ssthresh_bytes(), 10_625.0);
        assert!(s.in_cwr());
        s.on_ack(ack(12, true));
        for i in 13..=29 {
            s.on_ack(ack(i, false));
        }
        assert_eq!(s.window_bytes(), 10_625.0, "no second cut and no growth in CWR");
        s.on_ack(ack(30, true));
        assert!(close(s.alpha(), 0.88828125));
        assert!(close(s.window_bytes(), 5_906.005_859_375));
        assert_eq!(s.windows(), 2);
    }

    // Above ssthresh the window grows by about one MSS per window: 10,000 + 1000·1000/10,000 = 10,100.
    // The cut never goes below 2 MSS.
    #[test]
    fn congestion_avoidance_and_the_floor() {
        let p = DctcpParams { initial_alpha: 1.0, ..Default::default() };
        let mut s = DctcpSender::new(p, MSS as u32, 2 * MSS, 0).unwrap();
        s.on_ack(DctcpAck { acked_bytes: MSS, ece: true, snd_una: MSS, snd_nxt: 3 * MSS });
        assert_eq!(s.window_bytes(), 2_000.0, "alpha stays 1: 2,000·(1 − 1/2) is below 2 MSS, held at 2 MSS");
        let mut s = DctcpSender::new(DctcpParams::default(), MSS as u32, 10 * MSS, u64::MAX).unwrap();
        s.ssthresh = 5_000.0;
        s.on_ack(DctcpAck { acked_bytes: MSS, ece: false, snd_una: MSS, snd_nxt: 11 * MSS });
        assert_eq!(s.window_bytes(), 10_100.0);
        assert!(DctcpSender::new(DctcpParams::default(), 0, 1, 0).is_err());
    }
}
