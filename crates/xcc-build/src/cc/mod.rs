//! The sender algorithms a scenario can name (`cc = ...` of a flow), one file each: the entry as
//! written, its resolved parameters with their defaults and sources, and the controller and
//! echoer built from them. The registry below is the one list of them: the names scenarios
//! use, the error listing the known names, `xcc list` and Python all come from it.

pub mod bbr;
pub mod cubic;
pub mod jetmax;
pub mod maxnet;
pub mod newreno;
pub mod piqi_rcp;
pub mod rcp;
pub mod xcp;

use serde::Serialize;
use serde_json::Value;
use xcc_core::host::{AnyController, AnyEchoer, PlainEcho};
use xcc_core::wire::CongestionHeader;
use xcc_core::Dur;

use crate::scenario::model::Transport;
use crate::scenario::resolve::Resolver;
use crate::scenario::ScenarioError;

pub use bbr::BbrCcParams;
pub use cubic::CubicCcParams;
pub use jetmax::JetMaxCcParams;
pub use maxnet::MaxNetCcParams;
pub use newreno::NewRenoParams;
pub use piqi_rcp::PiqiRcpCcParams;
pub use rcp::RcpCcParams;
pub use xcp::XcpCcParams;

/// What every sender algorithm's parameters provide.
pub trait CcConfig: Sized {
    /// Resolves the entry at `path`: `v` is the table as written (`{ kind = "maxnet", ... }`),
    /// or `None` where the scenario gives the bare name (`cc = "xcp"`).
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError>;
    /// The sender's controller for a flow with transport `t`.
    fn controller(&self, t: &Transport) -> AnyController;
    /// The receiver's echoer; `two_way_delay` is the path's round-trip propagation delay.
    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Plain(PlainEcho::default())
    }
    /// The congestion header (shim) its packets carry on xcclab's transport, as a default
    /// value: what sizes its packets and what the emulator checks against the MTU.
    fn shim(&self) -> CongestionHeader {
        CongestionHeader::None
    }
    /// The Linux congestion control that stands in for it on real packets, if a Linux TCP
    /// connection carries it instead of xcclab's UDP transport; `kernel_stack` is set for
    /// `--stack kernel`, where kernel-resident algorithms run in Linux.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        None
    }
}

/// Bytes of a full data packet on the wire: payload, headers and the protocol's shim (what
/// rate-based sources space their packets by).
pub fn full_packet_bytes(t: &Transport, shim: CongestionHeader) -> u32 {
    t.mss_bytes + t.header_bytes + shim.wire_len() as u32
}

/// What the algorithm files use.
mod prelude {
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::Value;
    pub use xcc_core::host::*;
    pub use xcc_core::wire::*;
    pub use xcc_core::Dur;

    pub use super::{full_packet_bytes, CcConfig};
    pub use crate::scenario::model::Transport;
    pub use crate::scenario::resolve::{typed, Resolver};
    pub use crate::scenario::units::parse_rate_bps;
    pub use crate::scenario::ScenarioError;
}

macro_rules! cc_registry {
    ( $( $kw:literal as $tag:literal => $V:ident($P:ty) ),* $(,)? ) => {
        /// A flow sender's algorithm with its resolved parameters (`run.json` records it with
        /// the serde tag `kind`).
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind")]
        pub enum Cc {
            $( #[serde(rename = $tag)] $V($P) ),*
        }

        impl Cc {
            /// The names scenarios use, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($kw),*];
            /// The `kind` tags `run.json` records, in registry order.
            pub const TAGS: &'static [&'static str] = &[$($tag),*];

            /// Bytes the congestion header adds to every data packet of each algorithm with its
            /// default parameters, in registry order (what the max-min references of a run
            /// deduct from the wire rate).
            pub fn default_shim_bytes() -> Vec<usize> {
                let res = Resolver::detached("registry");
                Self::NAMES
                    .iter()
                    .map(|name| match Cc::resolve(name, &res, "cc", None) {
                        Some(Ok(cc)) => cc.shim().wire_len(),
                        _ => unreachable!("every cc resolves by its bare name (tested)"),
                    })
                    .collect()
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $( Cc::$V(_) => $kw ),*
                }
            }

            /// Resolves the entry of algorithm `name`; `None` if no algorithm has that name.
            pub fn resolve(
                name: &str,
                res: &Resolver,
                path: &str,
                v: Option<&Value>,
            ) -> Option<Result<Cc, ScenarioError>> {
                match name {
                    $( $kw => Some(<$P as CcConfig>::resolve(res, path, v).map(Cc::$V)), )*
                    _ => None,
                }
            }

            /// The sender's controller for a flow with transport `t`.
            pub fn controller(&self, t: &Transport) -> AnyController {
                match self {
                    $( Cc::$V(p) => p.controller(t), )*
                }
            }

            /// The receiver's echoer; `two_way_delay` is the path's round-trip propagation delay.
            pub fn echoer(&self, two_way_delay: Dur) -> AnyEchoer {
                match self {
                    $( Cc::$V(p) => p.echoer(two_way_delay), )*
                }
            }

            /// The congestion header its packets carry (see [`CcConfig::shim`]).
            pub fn shim(&self) -> CongestionHeader {
                match self {
                    $( Cc::$V(p) => p.shim(), )*
                }
            }

            /// The Linux congestion control standing in for it (see [`CcConfig::linux_tcp`]).
            pub fn linux_tcp(&self, kernel_stack: bool) -> Option<&'static str> {
                match self {
                    $( Cc::$V(p) => p.linux_tcp(kernel_stack), )*
                }
            }
        }
    };
}

// The registry of sender algorithms: one line each, `name as tag`: the name scenarios use, and
// the `kind` tag `run.json` records for it (kept from before the registry).
cc_registry! {
    "newreno" as "new_reno" => NewReno(NewRenoParams),
    "maxnet" as "maxnet" => MaxNet(MaxNetCcParams),
    "xcp" as "xcp" => Xcp(XcpCcParams),
    "rcp" as "rcp" => Rcp(RcpCcParams),
    "piqi-rcp" as "piqi-rcp" => PiqiRcp(PiqiRcpCcParams),
    "jetmax" as "jetmax" => JetMax(JetMaxCcParams),
    "cubic" as "cubic" => Cubic(CubicCcParams),
    "bbr" as "bbr" => Bbr(BbrCcParams),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run.json` records the resolved cc under these tags and fields (kept from before the
    /// registry).
    #[test]
    fn serde_tags_are_stable() {
        let reno = Cc::NewReno(NewRenoParams { initial_window: 2 });
        assert_eq!(serde_json::to_string(&reno).unwrap(), r#"{"kind":"new_reno","initial_window":2}"#);
        assert_eq!(serde_json::to_string(&Cc::Xcp(XcpCcParams {})).unwrap(), r#"{"kind":"xcp"}"#);
        let j = Cc::JetMax(JetMaxCcParams { tau: 0.5, probe_wait_ns: 7 });
        assert_eq!(serde_json::to_string(&j).unwrap(), r#"{"kind":"jetmax","tau":0.5,"probe_wait_ns":7}"#);
    }

    #[test]
    fn every_registered_name_resolves_by_its_bare_name() {
        let res = Resolver::for_tests();
        for name in Cc::NAMES {
            let cc = Cc::resolve(name, &res, "cc", None).expect("registered").unwrap();
            assert_eq!(cc.name(), *name);
        }
        assert!(Cc::resolve("nope", &res, "cc", None).is_none());
    }

    #[test]
    fn tags_are_what_run_json_records() {
        let res = Resolver::for_tests();
        for (name, tag) in Cc::NAMES.iter().zip(Cc::TAGS) {
            let cc = Cc::resolve(name, &res, "cc", None).unwrap().unwrap();
            assert_eq!(serde_json::to_value(cc).unwrap()["kind"], *tag);
        }
    }

    /// The shim sizes of wire/*.rs: 2 bytes (protocol, length) plus the body.
    #[test]
    fn default_shim_bytes_are_the_headers_sizes() {
        let by_name: Vec<(&str, usize)> = Cc::NAMES.iter().copied().zip(Cc::default_shim_bytes()).collect();
        let expected = [
            ("newreno", 0),
            ("maxnet", 8),
            ("xcp", 18),
            ("rcp", 10),
            ("piqi-rcp", 10),
            ("jetmax", 13),
            ("cubic", 0),
            ("bbr", 0),
        ];
        assert_eq!(by_name, expected);
    }
}
