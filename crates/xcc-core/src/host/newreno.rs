//! TCP NewReno congestion control (RFC 5681 + RFC 6582 window rules). (In progress.)

use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::Time;

/// NewReno parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct NewRenoConfig {
    pub mss_bytes: u32,
    pub initial_window_segments: u32,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig { mss_bytes: 1460, initial_window_segments: 2 }
    }
}

/// NewReno state.
#[derive(Debug, Clone)]
pub struct NewReno {
    cwnd: u64,
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig) -> NewReno {
        NewReno { cwnd: cfg.initial_window_segments as u64 * cfg.mss_bytes as u64 }
    }
}

impl Controller for NewReno {
    fn on_ack(&mut self, _now: Time, _ack: &AckEvent) {}
    fn on_congestion_event(&mut self, _now: Time, _e: CongestionEvent, _f: u64) {}
    fn window_bytes(&self) -> u64 {
        self.cwnd
    }
}
