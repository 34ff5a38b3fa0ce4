//! The `virtio_net_hdr` a TUN device opened with `IFF_VNET_HDR` puts in front of every packet
//! (`include/uapi/linux/virtio_net.h`). With offloads on (`TUNSETOFFLOAD`), the kernel hands
//! the router TCP super-packets of up to 64 KiB (`gso_type` TCPv4, cut into `gso_size`-byte
//! payloads by whoever takes them) and packets whose transport checksum is left for the
//! device to finish (`NEEDS_CSUM`, from `csum_start` to the end, stored at `csum_offset`).
//! [`crate::router::gso`] turns both into ordinary, fully checksummed IP packets.
//!
//! The fields are little-endian: a TUN device uses the host's byte order unless told
//! otherwise (`TUNSETVNETBE`), and every machine this runs on is little-endian.

/// Length of the header the router asks for (the default of `TUNSETVNETHDRSZ`).
pub const LEN: usize = 10;

/// `flags`: the transport checksum must still be computed (`csum_start`, `csum_offset`).
pub const F_NEEDS_CSUM: u8 = 1;
/// `flags`: the checksum was verified; the receiving kernel need not check it again.
pub const F_DATA_VALID: u8 = 2;

/// `gso_type`: a single packet.
pub const GSO_NONE: u8 = 0;
/// `gso_type`: a TCP/IPv4 super-packet.
pub const GSO_TCPV4: u8 = 1;
/// `gso_type`: a UDP/IPv4 super-packet cut into datagrams (`UDP_SEGMENT`, "USO").
pub const GSO_UDP_L4: u8 = 5;
/// `gso_type` bit: the TCP super-packet carries CWR, which only its first segment keeps.
pub const GSO_ECN: u8 = 0x80;

/// One `virtio_net_hdr`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    /// Length of the headers (IP + transport) in front of the payload, a hint only.
    pub hdr_len: u16,
    /// Payload bytes per segment of a super-packet.
    pub gso_size: u16,
    /// Where the checksummed range starts (the transport header), for `F_NEEDS_CSUM`.
    pub csum_start: u16,
    /// Where the checksum lives, from `csum_start`.
    pub csum_offset: u16,
}

impl VnetHdr {
    /// Reads the header in front of `buf`; `None` if `buf` is shorter than [`LEN`].
    pub fn parse(buf: &[u8]) -> Option<VnetHdr> {
        let b = buf.get(..LEN)?;
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        Some(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u16_at(2),
            gso_size: u16_at(4),
            csum_start: u16_at(6),
            csum_offset: u16_at(8),
        })
    }

    /// Writes the header into the first [`LEN`] bytes of `out`.
    pub fn emit(&self, out: &mut [u8]) {
        out[0] = self.flags;
        out[1] = self.gso_type;
        out[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        out[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        out[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        out[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        self.emit(&mut b);
        b
    }

    /// The `gso_type` without the ECN bit.
    pub fn gso_kind(&self) -> u8 {
        self.gso_type & !GSO_ECN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_little_endian() {
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4 | GSO_ECN,
            hdr_len: 52,
            gso_size: 1448,
            csum_start: 20,
            csum_offset: 16,
        };
        let b = h.to_bytes();
        assert_eq!(b, [1, 0x81, 52, 0, 0xA8, 0x05, 20, 0, 16, 0]);
        assert_eq!(VnetHdr::parse(&b), Some(h));
        assert_eq!(h.gso_kind(), GSO_TCPV4);
        assert_eq!(VnetHdr::parse(&b[..9]), None);
    }
}
