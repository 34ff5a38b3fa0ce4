//! A window-based flow whose path needs a larger window than the transport allows.
//!
//! The sender caps its window at TCP's largest, 2^30 bytes (RFC 7323 section 2.3), and at
//! 2^20 segments (`xcc_core::transport::window_cap_segments`), so that no buffer that grows
//! with a window can exhaust memory. A flow fills its path only if that cap covers the path's
//! bandwidth-delay product: the bottleneck rate of its route times its round trip (the
//! propagation delays of the route and of the way back). A scenario where it does not would
//! report the cap, not the controller; it is refused before the run, naming the flow and both
//! numbers. When the cap binds in a run that passed this check, the window exceeds the path's
//! product, so the excess only stands in queues: the run's summary warns about it (the flows
//! table's `window_capped`) but it is not an error.

use crate::scenario::model::{Link, Transport};
use crate::topology::{Route, Routes};
use xcc_core::transport::window_cap_segments;

/// `Err(message)` if the path of `fwd` (back along `rev`) needs more full-sized packets in
/// flight than the transport's window cap for this MSS.
pub fn check(transport: &Transport, fwd: Route, rev: Route, routes: &Routes, links: &[Link]) -> Result<(), String> {
    let delay_ns = |r: Route| -> u64 { (0..r.len).map(|k| links[routes.hop(r, k) as usize].delay_ns).sum() };
    let Some(bottleneck_bps) = (0..fwd.len).map(|k| links[routes.hop(fwd, k) as usize].rate_bps).min() else {
        return Ok(());
    };
    let rtt_s = (delay_ns(fwd) + delay_ns(rev)) as f64 * 1e-9;
    let packet_bytes = (transport.mss_bytes + transport.header_bytes).max(1) as f64;
    let needed = bottleneck_bps as f64 * rtt_s / (8.0 * packet_bytes);
    let cap = window_cap_segments(transport.mss_bytes);
    if needed <= cap as f64 {
        return Ok(());
    }
    Err(format!(
        "its path needs a window of {:.0} packets ({:.3} Gbit/s bottleneck x {:.0} ms round trip), more than \
         the transport's cap of {cap} packets of {} B (TCP's largest window, 2^30 B, RFC 7323): the run would \
         measure the cap, not the controller; lower the rate or the delay",
        needed.ceil(),
        bottleneck_bps as f64 * 1e-9,
        rtt_s * 1e3,
        transport.mss_bytes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::model::{Buffer, DropTailParams, Queue};

    fn link(rate_bps: u64, delay_ms: u64) -> Link {
        Link {
            name: String::new(),
            from: 0,
            to: 1,
            rate_bps,
            delay_ns: delay_ms * 1_000_000,
            buffer: Buffer { packets: None, bytes: None },
            queue: Queue::DropTail(DropTailParams {}),
            loss: 0.0,
            jitter_ns: 0,
        }
    }

    fn transport(mss_bytes: u32) -> Transport {
        Transport {
            mss_bytes,
            header_bytes: 40,
            ecn: false,
            sack: true,
            delayed_ack_ns: None,
            min_rto_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            pace: false,
            quick_acks: 0,
            handshake: false,
            linux_rto: false,
            rack: false,
        }
    }

    /// 2^30 B / 1460 B = 735,439 packets of 1500 B on the wire: 100 Gbit/s needs them within
    /// 88.2 ms of round trip. 50 ms each way (100 ms) is refused, 40 ms (80 ms) is not.
    #[test]
    fn a_path_whose_product_exceeds_the_cap_is_refused() {
        for (one_way_ms, ok) in [(40, true), (50, false)] {
            let links = vec![link(100_000_000_000, one_way_ms), link(100_000_000_000, one_way_ms)];
            let mut routes = Routes::default();
            let fwd = routes.add(&[0]);
            let rev = routes.add(&[1]);
            let r = check(&transport(1460), fwd, rev, &routes, &links);
            assert_eq!(r.is_ok(), ok, "{one_way_ms} ms: {r:?}");
            if let Err(e) = r {
                assert!(e.contains("cap of 735439 packets of 1460 B"), "{e}");
            }
        }
        // A tiny MSS meets the 2^20-segment cap first: 100 B packets at 10 Gbit/s, 100 ms.
        let links = vec![link(10_000_000_000, 50), link(10_000_000_000, 50)];
        let mut routes = Routes::default();
        let (fwd, rev) = (routes.add(&[0]), routes.add(&[1]));
        let e = check(&transport(60), fwd, rev, &routes, &links).unwrap_err();
        assert!(e.contains("cap of 1048576 packets"), "{e}");
    }
}
