//! The link algorithms a scenario can name (`queue = ...` of a link). Each algorithm's entry as
//! written (its serde spec), its resolved parameters with their defaults and sources, and the
//! algorithm built from them are in its folder of xcc-core (`xcc_core::params::LinkParams`);
//! this module deserialises the table and names the file and field of an error. [`Queue`] is
//! made from the one algorithm registry
//! (`xcc_core::for_each_algorithm!`): the names scenarios use, the error listing the known
//! names, `xcc list` and Python all come from it.

use serde::Serialize;
use serde_json::Value;
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::params::LinkParams;
use xcc_core::rng::Pcg64Mcg;

use crate::scenario::error::{typed, ScenarioError};

pub use xcc_core::algorithms::droptail::DropTailParams;
pub use xcc_core::algorithms::markmax::{MarkMaxLetter, MarkMaxParams};
pub use xcc_core::algorithms::red::RedParams;

/// The table of an entry without its `kind` (which chose the algorithm): what the algorithm's
/// `Spec` reads.
pub(crate) fn without_kind(v: &Value) -> Value {
    let mut v = v.clone();
    if let Value::Object(m) = &mut v {
        m.remove("kind");
    }
    v
}

/// Resolves the entry of link algorithm `P` at `path`: `v` is the table as written, `None` for
/// the bare name. The algorithm's own checks name a field inside the entry; this adds the file
/// and the entry's path.
fn resolve_entry<P: LinkParams>(source: &str, path: &str, v: Option<&Value>) -> Result<P, ScenarioError> {
    let spec = v.map(|v| typed::<P::Spec>(without_kind(v), path, source)).transpose()?;
    P::resolve(spec).map_err(|e| {
        let at = if e.field.is_empty() { path.to_string() } else { format!("{path}.{}", e.field) };
        ScenarioError { source: source.to_string(), path: at, message: e.message }
    })
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
            $( $( #[serde(rename = $ltag)] $LV(xcc_core::algorithms::$m::$LP), )? )*
        }

        impl Queue {
            /// The names scenarios use, in registry order.
            pub const NAMES: &'static [&'static str] = &[$( $( xcc_core::second!($LV, $name), )? )*];
            /// The `kind` tags `run.json` records, in registry order.
            pub const TAGS: &'static [&'static str] = &[$( $( $ltag, )? )*];
            /// Each algorithm's [`LinkParams::TARGET_UTILISATION`], in registry order.
            pub const TARGET_UTILISATION: &'static [Option<&'static str>] =
                &[$( $( <xcc_core::algorithms::$m::$LP as LinkParams>::TARGET_UTILISATION, )? )*];

            pub fn name(&self) -> &'static str {
                match self {
                    $( $( Queue::$LV(_) => $name, )? )*
                }
            }

            /// Resolves the entry of algorithm `name`; `None` if no algorithm has that name.
            pub fn resolve(
                name: &str,
                source: &str,
                path: &str,
                v: Option<&Value>,
            ) -> Option<Result<Queue, ScenarioError>> {
                match name {
                    $( $( xcc_core::second!($LV, $name) => {
                        Some(resolve_entry::<xcc_core::algorithms::$m::$LP>(source, path, v).map(Queue::$LV))
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
        let xcp = Queue::Xcp(xcc_core::algorithms::xcp::XcpRouterParams { alpha: 0.4, beta: 0.226, gamma: 0.1 });
        assert_eq!(serde_json::to_string(&xcp).unwrap(), r#"{"kind":"xcp","alpha":0.4,"beta":0.226,"gamma":0.1}"#);
    }

    #[test]
    fn every_registered_name_resolves_or_asks_for_its_parameters() {
        let res = "test";
        for name in Queue::NAMES {
            match Queue::resolve(name, res, "q", None).expect("registered") {
                Ok(q) => assert_eq!(q.name(), *name),
                Err(e) => assert!(e.message.contains(name), "{e}"),
            }
        }
        assert!(Queue::resolve("nope", res, "q", None).is_none());
    }

    #[test]
    fn tags_are_what_run_json_records() {
        let res = "test";
        for (name, tag) in Queue::NAMES.iter().zip(Queue::TAGS) {
            // Algorithms that need parameters (RED) have no bare form to serialise.
            if let Ok(q) = Queue::resolve(name, res, "q", None).unwrap() {
                assert_eq!(serde_json::to_value(q).unwrap()["kind"], *tag);
            }
        }
    }

    /// The named target parameter is a number of the resolved entry, in (0, 1].
    #[test]
    fn target_utilisation_names_a_resolved_fraction() {
        let res = "test";
        let mut with_target = Vec::new();
        for (name, target) in Queue::NAMES.iter().zip(Queue::TARGET_UTILISATION) {
            let Some(param) = target else { continue };
            let q = Queue::resolve(name, res, "q", None).unwrap().unwrap();
            let v = serde_json::to_value(q).unwrap()[param].as_f64().expect("a number");
            assert!(v > 0.0 && v <= 1.0, "{name}.{param} = {v}");
            with_target.push(*name);
        }
        assert_eq!(with_target, ["maxnet", "rcp", "piqi-rcp", "jetmax"]);
    }
}
