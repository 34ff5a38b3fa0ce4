//! The router: every link of the scenario on real packets. Its core has no I/O ([`fabric`]:
//! classify, route, run the links and rewrite the congestion headers; [`link`]: one link
//! direction in virtual time; [`sessions`]: seed 004's link tasks on their control packets),
//! fed by [`event_loop`], the one part that touches TUN devices and epoll.
//!
//! - [`checksum`], [`ipv4`]: reading and patching real headers from untrusted bytes.
//! - [`carrier`]: where a packet carries its congestion header (the pluggable classification).
//! - [`vnet`], [`gso`], [`gro`]: TUN offloads: the `virtio_net_hdr`, super-packets cut into
//!   segments on the way in, segments due together merged on the way out.

pub mod carrier;
pub mod checksum;
pub mod event_loop;
pub mod fabric;
pub mod gro;
pub mod gso;
pub mod ipv4;
pub mod link;
pub mod sessions;
pub mod vnet;
