//! Datacenter workloads as the HPCC and PowerTCP papers drive them: flow sizes drawn from a
//! published flow-size distribution ([`cdf`]; WebSearch and FB_Hadoop ship in `cdfs/` with their
//! source) and flows arriving as a Poisson process at a target load of the hosts' links
//! ([`poisson`]), incast requests to mix in ([`incast`]), and the papers' metric, FCT slowdown
//! by flow-size bin ([`slowdown`]). Sans-IO: generators hand out flows in time order; drivers
//! start them and report FCTs.

pub mod cdf;
pub mod incast;
pub mod poisson;
pub mod slowdown;

pub use cdf::{CdfError, FlowSizeCdf};
pub use incast::{IncastError, IncastRequest, IncastRequests};
pub use poisson::{Flow, PoissonFlows, WorkloadError};
pub use slowdown::{ideal_fct, slowdown_by_size, PathHop, SlowdownBin, SlowdownError};
