//! Software prefetch: a hint that the caller will soon read some memory, so the CPU starts
//! loading it while it works on something else. At large scale (10^5 links, 10^6 packets in
//! flight) a simulated packet-hop is a chain of cache misses; a driver that knows its next
//! event can start that event's loads during this one.

/// Starts loading the cache lines of `bytes` bytes from `p` (a no-op where not supported).
#[inline(always)]
pub fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    let p = p as *const u8;
    for off in (0..bytes).step_by(64) {
        prefetch_line(p.wrapping_add(off));
    }
}

#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address, and changes no memory.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
