//! Datacenter workloads as the HPCC and PowerTCP papers drive them: flow sizes drawn from a
//! published flow-size distribution ([`cdf`]; WebSearch and FB_Hadoop ship in `cdfs/` with their
//! source) and flows arriving as a Poisson process at a target load of the hosts' links
//! ([`poisson`]). Sans-IO: a generator hands out flows in time order; drivers start them.

pub mod cdf;
pub mod poisson;

pub use cdf::{CdfError, FlowSizeCdf};
pub use poisson::{Flow, PoissonFlows, WorkloadError};
