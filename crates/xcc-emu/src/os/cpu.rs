//! The CPU the router keeps to itself, and keeping other threads off it.

use crate::os::sys;

/// The CPU a router pins itself to: the last one, when there are several (at most 64) and
/// `XCC_EMU_RPS` is not 0; the hosts' receive processing keeps to the others, and so do the
/// bench's TCP applications ([`keep_off_router_cpu`]).
pub fn router_cpu() -> Option<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let steer = cpus > 1 && cpus <= 64 && std::env::var("XCC_EMU_RPS").map_or(true, |v| v != "0");
    steer.then_some(cpus - 1)
}

/// Keeps the calling thread off the router's CPU ([`router_cpu`]). For the bench's TCP
/// applications at real-time priority: the kernel's real-time limit (95 % of each second)
/// counts per CPU, and with them free to share the router's CPU the router was stopped for
/// 50 ms more often (docs/emu.md). Not for the UDP sender, nor xcclab's transport: the UDP
/// sender kept off offered a third less (it then shares a CPU with the hosts' receive
/// processing), and the transport was not measured so.
pub fn keep_off_router_cpu() {
    if let Some(c) = router_cpu() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        sys::pin_to_cpus((0..cpus).filter(|&k| k != c));
    }
}
