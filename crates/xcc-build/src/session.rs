//! A session flow's `protocol = ...` (seed 004's explicit-rate session protocols on the packet
//! engine): the name, or a table with `kind` and the protocol's parameters, typed into the
//! xcc-core parameter structs (strict: an unknown field is an error naming it).

use serde::Serialize;
use serde_json::Value;
use xcc_core::session::bfyz::BfyzParams;
use xcc_core::session::cobb::CobbParams;
use xcc_core::session::erica::EricaParams;
use xcc_core::session::piqi_rcp::PiqiRcpParams;
use xcc_core::session::rcp::RcpParams;
use xcc_core::session::slbn::SlbnParams;

use crate::scenario::resolve::{typed, Resolver};
use crate::scenario::ScenarioError;

/// A session protocol with its resolved parameters. Every session of one protocol in a
/// scenario shares the link tasks, so they must share the parameters too.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Protocol {
    Slbn(SlbnParams),
    Bfyz(BfyzParams),
    Erica(EricaParams),
    Cobb(CobbParams),
    Rcp(RcpParams),
    PiqiRcp(PiqiRcpParams),
}

impl Protocol {
    /// Names accepted in `protocol`.
    pub const NAMES: &'static [&'static str] = &["slbn", "bfyz", "erica", "cobb", "rcp", "piqi_rcp"];

    pub fn name(&self) -> &'static str {
        match self {
            Protocol::Slbn(_) => "slbn",
            Protocol::Bfyz(_) => "bfyz",
            Protocol::Erica(_) => "erica",
            Protocol::Cobb(_) => "cobb",
            Protocol::Rcp(_) => "rcp",
            Protocol::PiqiRcp(_) => "piqi_rcp",
        }
    }

    /// `protocol = "slbn"` (defaults) or `protocol = { kind = "slbn", ... }` at `path`.
    pub(crate) fn resolve(r: &Resolver, path: &str, v: Option<Value>) -> Result<Protocol, ScenarioError> {
        let known = || Protocol::NAMES.join(", ");
        let (kind, mut table) = match v {
            None => return Err(r.err(path, format!("a session flow needs a protocol (one of {})", known()))),
            Some(Value::String(s)) => (s, serde_json::Map::new()),
            Some(Value::Object(mut o)) => match o.remove("kind") {
                Some(Value::String(k)) => (k, o),
                _ => return Err(r.err(&format!("{path}.kind"), format!("expected one of {}", known()))),
            },
            Some(other) => {
                return Err(r.err(path, format!("expected a protocol name or a table with kind = ..., found {other}")))
            }
        };
        let params = Value::Object(std::mem::take(&mut table));
        let src = r.source;
        Ok(match kind.as_str() {
            "slbn" => Protocol::Slbn(typed(params, path, src)?),
            "bfyz" => Protocol::Bfyz(typed(params, path, src)?),
            "erica" => Protocol::Erica(typed(params, path, src)?),
            "cobb" => Protocol::Cobb(typed(params, path, src)?),
            "rcp" => Protocol::Rcp(typed(params, path, src)?),
            "piqi_rcp" => Protocol::PiqiRcp(typed(params, path, src)?),
            other => {
                return Err(
                    r.err(&format!("{path}.kind"), format!("unknown session protocol '{other}' (known: {})", known()))
                )
            }
        })
    }
}
