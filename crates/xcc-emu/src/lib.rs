//! # xcc-emu: the xcc-core link algorithms on real packets
//!
//! Hosts live in Linux network namespaces and talk through one userspace router process: a TUN
//! device in each host's namespace, every link of the scenario modelled in virtual time, and
//! the very same link algorithms as the simulator deciding what to forward, mark, drop or
//! rewrite.
//!
//! The crate is four concerns, one folder each, and nothing else:
//!
//! - [`router`]: the router, a sans-IO core (classify, route, links, rewrites, session link
//!   tasks) and its TUN/epoll event loop with the TUN offloads;
//! - [`os`]: namespaces, system calls, the kernel limits a run lifts;
//! - [`hosts`]: the hosts' traffic (xcclab's UDP transport, Linux TCP, CBR, sessions);
//! - [`run`]: orchestration (preflight, the plan, the run, the command line, the benchmark).
//!
//! The router and the hosts know nothing of the run; the run uses them all.

pub mod hosts;
pub mod os;
pub mod router;
pub mod run;
