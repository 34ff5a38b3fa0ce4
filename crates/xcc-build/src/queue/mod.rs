//! The link algorithms a scenario can name (`queue = ...` of a link), one file each: the entry
//! as written (its serde spec), its resolved parameters with their defaults and sources, and
//! the xcc-core algorithm built from them. [`Queue`] is made from the one algorithm registry
//! (`xcc_core::for_each_algorithm!`): the names scenarios use, the error listing the known
//! names, `xcc list` and Python all come from it.

pub mod droptail;
pub mod jetmax;
pub mod markmax;
pub mod maxnet;
pub mod piqi_rcp;
pub mod rcp;
pub mod red;
pub mod xcp;

use serde::Serialize;
use serde_json::Value;
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::rng::Pcg64Mcg;

use crate::scenario::resolve::Resolver;
use crate::scenario::ScenarioError;

pub use droptail::DropTailParams;
pub use jetmax::JetMaxRouterParams;
pub use markmax::{MarkMaxLetter, MarkMaxParams};
pub use maxnet::MaxNetRouterParams;
pub use piqi_rcp::PiqiRcpRouterParams;
pub use rcp::RcpRouterParams;
pub use red::RedParams;
pub use xcp::XcpRouterParams;

/// What every link algorithm's parameters provide.
pub trait QueueConfig: Sized {
    /// Resolves the entry at `path`: `v` is the table as written (`{ kind = "red", ... }`), or
    /// `None` where the scenario gives the bare name (`queue = "xcp"`).
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError>;
    /// The algorithm for a link of `rate_bps`; `rng` is the link's own stream (random phases).
    fn build(&self, rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm;
    /// The resolved parameter (as `run.json` names it) holding the fraction of capacity the
    /// algorithm aims to fill, if it has one (MaxNet's `mu`, RCP's `gamma`): what the max-min
    /// references of a run scale each link's capacity by.
    const TARGET_UTILISATION: Option<&'static str> = None;
}

/// What the algorithm files use.
mod prelude {
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::Value;
    pub use xcc_core::link::*;
    pub use xcc_core::rng::{uniform01, Pcg64Mcg};
    pub use xcc_core::{Dur, Time};

    pub use super::QueueConfig;
    pub use crate::scenario::resolve::{typed, Resolver};
    pub use crate::scenario::units::{parse_amount, parse_bytes, parse_rate_bps, Amount};
    pub use crate::scenario::ScenarioError;
}

macro_rules! queue_registry {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// A link direction's algorithm with its resolved parameters (`run.json` records it
        /// with the serde tag `kind`).
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind")]
        pub enum Queue {
            $( $( #[serde(rename = $ltag)] $LV($m::$LP), )? )*
        }

        impl Queue {
            /// The names scenarios use, in registry order.
            pub const NAMES: &'static [&'static str] = &[$( $( xcc_core::second!($LV, $name), )? )*];
            /// The `kind` tags `run.json` records, in registry order.
            pub const TAGS: &'static [&'static str] = &[$( $( $ltag, )? )*];
            /// Each algorithm's [`QueueConfig::TARGET_UTILISATION`], in registry order.
            pub const TARGET_UTILISATION: &'static [Option<&'static str>] =
                &[$( $( <$m::$LP as QueueConfig>::TARGET_UTILISATION, )? )*];

            pub fn name(&self) -> &'static str {
                match self {
                    $( $( Queue::$LV(_) => $name, )? )*
                }
            }

            /// Resolves the entry of algorithm `name`; `None` if no algorithm has that name.
            pub fn resolve(
                name: &str,
                res: &Resolver,
                path: &str,
                v: Option<&Value>,
            ) -> Option<Result<Queue, ScenarioError>> {
                match name {
                    $( $( xcc_core::second!($LV, $name) => {
                        Some(<$m::$LP as QueueConfig>::resolve(res, path, v).map(Queue::$LV))
                    } )? )*
                    _ => None,
                }
            }

            /// The xcc-core algorithm for a link of `rate_bps`.
            pub fn build(&self, rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
                match self {
                    $( $( Queue::$LV(p) => p.build(rng, rate_bps), )? )*
                }
            }
        }
    };
}

// One variant per line of the algorithm registry (`xcc_core::for_each_algorithm!`) with a `link`
// role: the name scenarios use, and the `kind` tag `run.json` records for it.
xcc_core::for_each_algorithm!(queue_registry);

#[cfg(test)]
mod tests {
    use super::*;

    /// `run.json` records the resolved queue under these tags (kept from before the registry).
    #[test]
    fn serde_tags_are_stable() {
        let json = serde_json::to_string(&Queue::DropTail(DropTailParams {})).unwrap();
        assert_eq!(json, r#"{"kind":"drop_tail"}"#);
        let xcp = Queue::Xcp(XcpRouterParams { alpha: 0.4, beta: 0.226, gamma: 0.1 });
        assert_eq!(serde_json::to_string(&xcp).unwrap(), r#"{"kind":"xcp","alpha":0.4,"beta":0.226,"gamma":0.1}"#);
    }

    #[test]
    fn every_registered_name_resolves_or_asks_for_its_parameters() {
        let res = Resolver::for_tests();
        for name in Queue::NAMES {
            match Queue::resolve(name, &res, "q", None).expect("registered") {
                Ok(q) => assert_eq!(q.name(), *name),
                Err(e) => assert!(e.message.contains(name), "{e}"),
            }
        }
        assert!(Queue::resolve("nope", &res, "q", None).is_none());
    }

    #[test]
    fn tags_are_what_run_json_records() {
        let res = Resolver::for_tests();
        for (name, tag) in Queue::NAMES.iter().zip(Queue::TAGS) {
            // Algorithms that need parameters (RED) have no bare form to serialise.
            if let Ok(q) = Queue::resolve(name, &res, "q", None).unwrap() {
                assert_eq!(serde_json::to_value(q).unwrap()["kind"], *tag);
            }
        }
    }

    /// The named target parameter is a number of the resolved entry, in (0, 1].
    #[test]
    fn target_utilisation_names_a_resolved_fraction() {
        let res = Resolver::for_tests();
        let mut with_target = Vec::new();
        for (name, target) in Queue::NAMES.iter().zip(Queue::TARGET_UTILISATION) {
            let Some(param) = target else { continue };
            let q = Queue::resolve(name, &res, "q", None).unwrap().unwrap();
            let v = serde_json::to_value(q).unwrap()[param].as_f64().expect("a number");
            assert!(v > 0.0 && v <= 1.0, "{name}.{param} = {v}");
            with_target.push(*name);
        }
        assert_eq!(with_target, ["maxnet", "rcp", "piqi-rcp", "jetmax"]);
    }
}
