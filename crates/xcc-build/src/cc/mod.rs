//! The sender algorithms a scenario can name (`cc = ...` of a flow). Each one's entry as
//! written, its resolved parameters with their defaults and sources, and the controller and
//! echoer built from them are in its folder of xcc-core (`xcc_core::params::HostParams`). [`Cc`]
//! is made from the one algorithm registry: the names scenarios use, the error listing the
//! known names, `xcc list` and Python all come from it.

use serde::Serialize;
use serde_json::Value;
use xcc_core::host::{AnyController, AnyEchoer};
use xcc_core::params::{HostContext, HostParams};
use xcc_core::wire::CongestionHeader;
use xcc_core::Dur;

use crate::queue::without_kind;
use crate::scenario::error::{typed, ScenarioError};

pub use xcc_core::algorithms::newreno::NewRenoParams;

/// Resolves the entry of sender `P` at `path` (see the queue module's twin).
fn resolve_entry<P: HostParams>(source: &str, path: &str, v: Option<&Value>) -> Result<P, ScenarioError> {
    let spec = v.map(|v| typed::<P::Spec>(without_kind(v), path, source)).transpose()?;
    P::resolve(spec).map_err(|e| {
        let at = if e.field.is_empty() { path.to_string() } else { format!("{path}.{}", e.field) };
        ScenarioError { source: source.to_string(), path: at, message: e.message }
    })
}

macro_rules! cc_registry {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// A flow sender's algorithm with its resolved parameters (`run.json` records it with
        /// the serde tag `kind`).
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind")]
        pub enum Cc {
            $( $( #[serde(rename = $htag)] $HV(xcc_core::algorithms::$m::$HP), )? )*
        }

        impl Cc {
            /// The names scenarios use, in registry order.
            pub const NAMES: &'static [&'static str] = &[$( $( xcc_core::second!($HV, $name), )? )*];
            /// The `kind` tags `run.json` records, in registry order.
            pub const TAGS: &'static [&'static str] = &[$( $( $htag, )? )*];

            /// Bytes the congestion header adds to every data packet of each algorithm with its
            /// default parameters, in registry order (what the max-min references of a run
            /// deduct from the wire rate).
            pub fn default_shim_bytes() -> Vec<usize> {
                Self::NAMES
                    .iter()
                    .map(|name| match Cc::resolve(name, "registry", "cc", None) {
                        Some(Ok(cc)) => cc.shim().wire_len(),
                        _ => unreachable!("every cc resolves by its bare name (tested)"),
                    })
                    .collect()
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $( $( Cc::$HV(_) => $name, )? )*
                }
            }

            /// Resolves the entry of algorithm `name`; `None` if no algorithm has that name.
            pub fn resolve(
                name: &str,
                source: &str,
                path: &str,
                v: Option<&Value>,
            ) -> Option<Result<Cc, ScenarioError>> {
                match name {
                    $( $( xcc_core::second!($HV, $name) => {
                        Some(resolve_entry::<xcc_core::algorithms::$m::$HP>(source, path, v).map(Cc::$HV))
                    } )? )*
                    _ => None,
                }
            }

            /// The sender's controller for a flow with transport `t`.
            pub fn controller(&self, t: &HostContext) -> AnyController {
                match self {
                    $( $( Cc::$HV(p) => p.controller(t), )? )*
                }
            }

            /// The receiver's echoer; `two_way_delay` is the path's round-trip propagation delay.
            pub fn echoer(&self, two_way_delay: Dur) -> AnyEchoer {
                match self {
                    $( $( Cc::$HV(p) => p.echoer(two_way_delay), )? )*
                }
            }

            /// The congestion header its packets carry (see [`HostParams::shim`]).
            pub fn shim(&self) -> CongestionHeader {
                match self {
                    $( $( Cc::$HV(p) => p.shim(), )? )*
                }
            }

            /// The Linux congestion control standing in for it (see [`HostParams::linux_tcp`]).
            pub fn linux_tcp(&self, kernel_stack: bool) -> Option<&'static str> {
                match self {
                    $( $( Cc::$HV(p) => p.linux_tcp(kernel_stack), )? )*
                }
            }
        }
    };
}

// One variant per line of the algorithm registry (`xcc_core::for_each_algorithm!`) with a `host`
// role: the name scenarios use, and the `kind` tag `run.json` records for it.
xcc_core::for_each_algorithm!(cc_registry);

#[cfg(test)]
mod tests {
    use super::*;

    /// `run.json` records the resolved cc under these tags and fields (kept from before the
    /// registry).
    #[test]
    fn serde_tags_are_stable() {
        let reno = Cc::NewReno(NewRenoParams { initial_window: 2 });
        assert_eq!(serde_json::to_string(&reno).unwrap(), r#"{"kind":"new_reno","initial_window":2}"#);
        assert_eq!(
            serde_json::to_string(&Cc::Xcp(xcc_core::algorithms::xcp::XcpCcParams {})).unwrap(),
            r#"{"kind":"xcp"}"#
        );
        let j = Cc::JetMax(xcc_core::algorithms::jetmax::JetMaxCcParams { tau: 0.5, probe_wait_ns: 7 });
        assert_eq!(serde_json::to_string(&j).unwrap(), r#"{"kind":"jetmax","tau":0.5,"probe_wait_ns":7}"#);
    }

    #[test]
    fn every_registered_name_resolves_by_its_bare_name() {
        let res = "test";
        for name in Cc::NAMES {
            let cc = Cc::resolve(name, res, "cc", None).expect("registered").unwrap();
            assert_eq!(cc.name(), *name);
        }
        assert!(Cc::resolve("nope", res, "cc", None).is_none());
    }

    #[test]
    fn tags_are_what_run_json_records() {
        let res = "test";
        for (name, tag) in Cc::NAMES.iter().zip(Cc::TAGS) {
            let cc = Cc::resolve(name, res, "cc", None).unwrap().unwrap();
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
            // INT: preamble 2 + 5 records of 16, the default int_slots.
            ("hpcc", 84),
            ("powertcp", 84),
            ("dctcp", 0),
            ("dcqcn", 0),
        ];
        assert_eq!(by_name, expected);
    }
}
