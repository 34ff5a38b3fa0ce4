//! The registry of session protocols: one line per protocol; the list of names and the
//! dispatch both come from it.

use super::network::Network;
use super::sim::{RunSettings, SessionOutput, SessionSim};
use super::workload::Sessions;
use xcc_core::session::bfyz::Bfyz;
use xcc_core::session::cobb::Cobb;
use xcc_core::session::erica::Erica;
use xcc_core::session::piqi_rcp::PiqiRcp;
use xcc_core::session::rcp::Rcp;
use xcc_core::session::slbn::Slbn;
use xcc_core::session::SessionProtocol;

macro_rules! session_protocols {
    ( $( $name:literal => $P:ty ),* $(,)? ) => {
        /// Names accepted in `protocol`, in registry order.
        pub const PROTOCOLS: &[&str] = &[$($name),*];

        /// Runs `name` with its parameters (a JSON object, `null` for the defaults).
        pub fn run_protocol(
            name: &str,
            params: &serde_json::Value,
            net: &Network,
            sessions: Sessions,
            settings: RunSettings,
            progress: Option<&mut dyn FnMut(f64)>,
        ) -> Result<SessionOutput, String> {
            match name {
                $( $name => run::<$P>(params, net, sessions, settings, progress), )*
                other => Err(format!("protocol: unknown session protocol {other:?}; expected one of {PROTOCOLS:?}")),
            }
        }
    };
}

// The registry: one line per protocol.
session_protocols! {
    "slbn" => Slbn,
    "rcp" => Rcp,
    "piqi_rcp" => PiqiRcp,
    "erica" => Erica,
    "bfyz" => Bfyz,
    "cobb" => Cobb,
}

/// Parses `P`'s parameters strictly and runs it.
pub fn run<P: SessionProtocol>(
    params: &serde_json::Value,
    net: &Network,
    sessions: Sessions,
    settings: RunSettings,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<SessionOutput, String> {
    let params: P::Params = if params.is_null() {
        P::Params::default()
    } else {
        serde_path_to_error::deserialize(params.clone())
            .map_err(|e| format!("protocol_params.{}: {}", e.path(), e.inner()))?
    };
    SessionSim::<P>::new(params, net, sessions, settings)?.run(progress)
}
