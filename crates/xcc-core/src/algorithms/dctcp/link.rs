//! DCTCP's switch: "mark arriving packets with the CE codepoint if the queue occupancy is
//! greater than K upon its arrival" (Alizadeh et al., section 3.1) — a step on the
//! instantaneous queue, no averaging, no randomness.

use super::DctcpParams;

/// The marking rule of one egress port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DctcpMarker {
    k_bytes: u64,
}

impl DctcpMarker {
    /// The marker with `params`' K (checked).
    pub fn new(params: &DctcpParams) -> Result<DctcpMarker, String> {
        params.check()?;
        Ok(DctcpMarker { k_bytes: params.k_bytes })
    }

    /// Whether a packet arriving to a queue of `queue_bytes` is marked.
    pub fn should_mark(&self, queue_bytes: u64) -> bool {
        queue_bytes > self.k_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_strictly_above_k() {
        let m = DctcpMarker::new(&DctcpParams { k_bytes: 30_000, ..Default::default() }).unwrap();
        assert!(!m.should_mark(0));
        assert!(!m.should_mark(30_000));
        assert!(m.should_mark(30_001));
    }
}
