//! A session flow's `protocol = ...` (seed 004's explicit-rate session protocols on the packet
//! engine): the name, or a table with `kind` and the protocol's parameters, typed into the
//! xcc-core parameter structs (strict: an unknown field is an error naming it). The list of
//! protocols is the algorithm registry's (`xcc_core::for_each_algorithm!`).

use serde::Serialize;
use serde_json::Value;
use xcc_core::session::data_share::DataShare;
use xcc_core::session::SessionProtocol;
use xcc_core::wire::session::SessionWire;

use crate::scenario::error::{typed, ScenarioError};

/// What a driver does with a session protocol's type: [`Protocol::visit`] calls it with the
/// protocol's xcc-core type and its parameters, so a driver builds its generic state without a
/// list of protocols of its own.
pub trait ProtocolVisitor {
    type Output;
    fn visit<P: SessionProtocol + DataShare + SessionWire + 'static>(self, params: P::Params) -> Self::Output;
}

/// Spellings accepted for one release, with the name that replaces them.
const DEPRECATED: &[(&str, &str)] = &[("piqi_rcp", "piqi-rcp")];

macro_rules! session_registry {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// A session protocol with its resolved parameters. Every session of one protocol in a
        /// scenario shares the link tasks, so they must share the parameters too. One variant
        /// per line of the algorithm registry with a `session` role; `run.json` records the
        /// algorithm's name as `kind`.
        #[derive(Copy, Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind")]
        pub enum Protocol {
            $( $( #[serde(rename = $name)] $SV(xcc_core::algorithms::$m::$SP), )? )*
        }

        impl Protocol {
            /// Names accepted in `protocol`, in registry order.
            pub const NAMES: &'static [&'static str] = &[$( $( xcc_core::second!($SV, $name), )? )*];

            pub fn name(&self) -> &'static str {
                match self {
                    $( $( Protocol::$SV(_) => $name, )? )*
                }
            }

            /// Calls `v` with this protocol's xcc-core type and parameters.
            pub fn visit<V: ProtocolVisitor>(&self, v: V) -> V::Output {
                match *self {
                    $( $( Protocol::$SV(p) => v.visit::<xcc_core::algorithms::$m::$ST>(p), )? )*
                }
            }

            fn typed(kind: &str, params: Value, path: &str, src: &str) -> Option<Result<Protocol, ScenarioError>> {
                match kind {
                    $( $( xcc_core::second!($SV, $name) => Some(typed(params, path, src).map(Protocol::$SV)), )? )*
                    _ => None,
                }
            }
        }
    };
}

xcc_core::for_each_algorithm!(session_registry);

impl Protocol {
    /// `protocol = "slbn"` (defaults) or `protocol = { kind = "slbn", ... }` at `path`.
    pub(crate) fn resolve(source: &str, path: &str, v: Option<Value>) -> Result<Protocol, ScenarioError> {
        let err =
            |path: &str, message: String| ScenarioError { source: source.to_string(), path: path.to_string(), message };
        let known = || Protocol::NAMES.join(", ");
        let (mut kind, mut table) = match v {
            None => return Err(err(path, format!("a session flow needs a protocol (one of {})", known()))),
            Some(Value::String(s)) => (s, serde_json::Map::new()),
            Some(Value::Object(mut o)) => match o.remove("kind") {
                Some(Value::String(k)) => (k, o),
                _ => return Err(err(&format!("{path}.kind"), format!("expected one of {}", known()))),
            },
            Some(other) => {
                return Err(err(path, format!("expected a protocol name or a table with kind = ..., found {other}")))
            }
        };
        if let Some((old, new)) = DEPRECATED.iter().find(|(old, _)| *old == kind) {
            eprintln!("xcc: warning: {}: {path}: '{old}' is deprecated, write '{new}'", source);
            kind = new.to_string();
        }
        let params = Value::Object(std::mem::take(&mut table));
        Protocol::typed(&kind, params, path, source).unwrap_or_else(|| {
            Err(err(&format!("{path}.kind"), format!("unknown session protocol '{kind}' (known: {})", known())))
        })
    }
}
