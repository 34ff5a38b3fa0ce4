//! # xcc-emu: the xcc-core link algorithms on real packets
//!
//! Hosts live in Linux network namespaces and talk through one userspace router process: a TUN
//! device in each host's namespace, every link of the scenario modelled in virtual time, and
//! the very same link algorithms as the simulator deciding what to forward, mark, drop or
//! rewrite.
//!
//! - [`checksum`], [`ipv4`]: reading and patching real headers from untrusted bytes.
//! - [`carrier`]: where a packet carries its congestion header (the pluggable classification).
//! - [`link`]: one link direction in virtual time.
//! - [`fabric`]: the router without I/O (classify, route, links, rewrites).
//! - [`router`]: the router with I/O (TUN devices, epoll); [`sysctl_lift`]: the kernel's limits
//!   on real-time threads and on the receive backlog lifted while a run lasts.
//! - [`vnet`], [`gso`], [`gro`]: TUN offloads: the `virtio_net_hdr`, super-packets cut into
//!   segments on the way in, segments due together merged on the way out.
//! - [`netns`]: namespaces, their devices and their cleanup.
//! - [`preflight`]: what a run checks before touching anything.
//! - [`cli`]: the `xcc-emu` command line (also `python -m xcclab._router`).
//! - [`plan`]: a resolved scenario turned into namespaces, ports, links and routes.
//! - [`apps`]: traffic written in the project (TCP bulk, UDP echo).
//! - [`session_router`]: seed 004's session protocols' link tasks on their control packets;
//!   [`session_hosts`]: the sessions' sources and destinations.
//! - [`udp_transport`]: xcclab's transport over UDP on real sockets; [`send_batch`]: its
//!   datagrams due together sent with one system call.
//! - [`sys`]: the system calls.

pub mod apps;
pub mod bench;
pub mod carrier;
pub mod cbr;
pub mod checksum;
pub mod cli;
pub mod fabric;
pub mod gro;
pub mod gso;
pub mod ipv4;
pub mod link;
pub mod netns;
pub mod plan;
pub mod preflight;
pub mod router;
pub mod runner;
pub mod send_batch;
pub mod session_hosts;
pub mod session_router;
pub mod sys;
pub mod sysctl_lift;
pub mod udp_transport;
pub mod vnet;
