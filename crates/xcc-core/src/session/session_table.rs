//! Per-session state at a link, for the algorithms that keep it (ERICA, BFYZ): a hash map keyed
//! by the session id with a multiplicative hash. Session ids are small dense integers handed
//! out by the driver, so SipHash's protection against chosen keys buys nothing and costs a
//! few times more per lookup (one lookup per control packet, and ERICA one per data packet).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one integer key by a Fibonacci multiplication (Knuth); the high bits, which the
/// multiplication mixes best, end up where `HashMap` looks.
#[derive(Default, Clone, Copy)]
pub struct SessionIdHasher(u64);

impl Hasher for SessionIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64 ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Per-session state of one link, keyed by session id.
pub type SessionTable<V> = HashMap<u32, V, BuildHasherDefault<SessionIdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_ids_hash_apart_and_the_table_works() {
        let h = |n: u32| {
            let mut s = SessionIdHasher::default();
            s.write_u32(n);
            s.finish()
        };
        assert_ne!(h(1), h(2));
        assert_ne!(h(0), h(1 << 20));
        let mut t: SessionTable<f64> = SessionTable::default();
        for i in 0..1000u32 {
            t.insert(i, i as f64);
        }
        assert_eq!(t.len(), 1000);
        assert_eq!(t[&777], 777.0);
    }
}
