//! The operating system's side of a run: network namespaces and their devices ([`netns`]), the
//! system calls ([`sys`]), and the machine-wide kernel limits a run lifts and sets back
//! ([`sysctl_lift`]: real-time throttling, the receive backlog), the stop flag set by signals
//! ([`signals`]) and the router's CPU ([`cpu`]).

pub mod cpu;
pub mod netns;
pub mod signals;
pub mod sys;
pub mod sysctl_lift;
