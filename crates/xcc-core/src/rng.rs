//! Deterministic randomness: every component draws from its own PCG stream, seeded from the run
//! seed and the component's stable id, so adding a flow never changes another flow's draws.

use rand_core::{RngCore, SeedableRng};
pub use rand_pcg::Pcg64Mcg;

/// A PCG generator for component `stream` of the run seeded with `seed`.
pub fn component_rng(seed: u64, kind: u64, stream: u64) -> Pcg64Mcg {
    // SplitMix64 mixing of (seed, kind, stream) so nearby ids give unrelated streams.
    let mut x = seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let lo = next() as u128;
    let hi = next() as u128;
    Pcg64Mcg::from_seed(((hi << 64) | lo | 1).to_le_bytes())
}

/// A uniform draw in [0, 1) with 53 bits of precision.
pub fn uniform01(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Component kinds, so that link 3 and flow 3 never share a stream.
pub mod kind {
    pub const LINK: u64 = 1;
    pub const FLOW: u64 = 2;
    pub const GENERATOR: u64 = 3;
    pub const LINK_LOSS: u64 = 4;
}
