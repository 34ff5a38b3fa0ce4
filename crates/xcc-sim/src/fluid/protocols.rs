//! The session protocols of the algorithm registry (`xcc_core::for_each_algorithm!`) in the
//! fluid session driver: the list of names and the dispatch both come from it.

use super::sim::{RunSettings, SessionOutput, SessionSim};
use xcc_build::sessions::{Graph, Sessions};
use xcc_core::session::SessionProtocol;

macro_rules! session_protocols {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// Names accepted in `protocol`, in registry order.
        pub const PROTOCOLS: &[&str] = &[$( $( xcc_core::second!($SV, $name), )? )*];

        /// Runs `name` with its parameters (a JSON object, `null` for the defaults).
        pub fn run_protocol(
            name: &str,
            params: &serde_json::Value,
            net: &Graph,
            sessions: Sessions,
            settings: RunSettings,
            progress: Option<&mut dyn FnMut(f64)>,
        ) -> Result<SessionOutput, String> {
            // The spelling before the registry named every algorithm once (one release).
            let name = if name == "piqi_rcp" { "piqi-rcp" } else { name };
            match name {
                $( $( xcc_core::second!($SV, $name) => {
                    run::<xcc_core::algorithms::$m::$ST>(params, net, sessions, settings, progress)
                } )? )*
                other => Err(format!("protocol: unknown session protocol {other:?}; expected one of {PROTOCOLS:?}")),
            }
        }
    };
}

// One line per session protocol of the algorithm registry.
xcc_core::for_each_algorithm!(session_protocols);

/// Parses `P`'s parameters strictly and runs it.
pub fn run<P: SessionProtocol>(
    params: &serde_json::Value,
    net: &Graph,
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
