//! In-band network telemetry (INT): the per-hop records that HPCC (Li et al., SIGCOMM 2019,
//! section 3.2) and PowerTCP (Addanki et al., NSDI 2022, section 4) read. Each switch egress
//! port a packet leaves through appends what it knows at that instant: its queue length, the
//! bytes it has transmitted so far, a timestamp and its line rate. The receiver copies the
//! records onto the ACK; the sender compares two successive records of the same hop to get the
//! hop's transmit rate over the interval between them.
//!
//! [`header`] is the value type and its exact wire encoding; [`port`] is what an egress port
//! stamps. The header is in the registry (`"int"`, shim protocol 47); docs/algorithms/hpcc.md
//! ("On the wire") has its format and why it is held inline.

pub mod header;
pub mod port;

pub use header::{IntError, IntHeader, IntHop, INT_HOP_LEN, INT_MAX_SLOTS, INT_PREAMBLE_LEN};
pub use port::IntPort;
