//! A session experiment as JSON (written by the Python reproductions): protocol, topology,
//! workload, duration and sampling. Parsed strictly; errors name the field.

use super::protocols::run_protocol;
use super::sim::{RunSettings, SessionOutput};
use serde::Deserialize;
use xcc_build::sessions::{generate, Graph, TopologySpec, WorkloadSpec};
use xcc_core::{Dur, Time};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub protocol: String,
    #[serde(default)]
    pub protocol_params: serde_json::Value,
    /// Seeds the topology (with `topology_seed` unset) and the workload.
    #[serde(default)]
    pub seed: u64,
    /// Seed of the topology alone, so that every seed of a study can share one network.
    #[serde(default)]
    pub topology_seed: Option<u64>,
    pub topology: TopologySpec,
    pub workload: WorkloadSpec,
    pub duration_s: f64,
    pub sample_interval_s: f64,
    /// Share of the assigned rate sent as data (1 - control budget).
    #[serde(default = "default_data_share")]
    pub data_share: f64,
    #[serde(default)]
    pub record_final: bool,
}

fn default_data_share() -> f64 {
    0.99
}

impl Experiment {
    pub fn parse(text: &str, source: &str) -> Result<Experiment, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let e: Experiment =
            serde_path_to_error::deserialize(de).map_err(|e| format!("{source}: {}: {}", e.path(), e.inner()))?;
        if !(e.duration_s > 0.0 && e.sample_interval_s > 0.0) {
            return Err(format!("{source}: duration_s, sample_interval_s: expected > 0"));
        }
        if !(e.data_share > 0.0 && e.data_share <= 1.0) {
            return Err(format!("{source}: data_share: expected in (0, 1], got {}", e.data_share));
        }
        Ok(e)
    }

    pub fn network(&self) -> Result<Graph, String> {
        self.topology.graph(self.topology_seed.unwrap_or(self.seed)).map_err(|e| format!("topology: {e}"))
    }
}

/// Parses and runs an experiment.
pub fn run_experiment(
    text: &str,
    source: &str,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<SessionOutput, String> {
    let e = Experiment::parse(text, source)?;
    let net = e.network().map_err(|m| format!("{source}: {m}"))?;
    let sessions = generate(&e.workload, &net, e.seed).map_err(|m| format!("{source}: {m}"))?;
    let settings = RunSettings {
        duration: Time::ZERO + Dur::from_secs_f64(e.duration_s),
        sample_interval: Dur::from_secs_f64(e.sample_interval_s),
        data_share: e.data_share,
        record_final: e.record_final,
    };
    run_protocol(&e.protocol, &e.protocol_params, &net, sessions, settings, progress)
        .map_err(|m| format!("{source}: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_and_protocol_are_named() {
        let bad = r#"{"protocol": "slbn", "topology": "medium", "workload": {"arrivals": []},
                      "duration_s": 1, "sample_interval_s": 0.1, "colour": 1}"#;
        let e = Experiment::parse(bad, "x.json").unwrap_err();
        assert!(e.contains("x.json") && e.contains("colour"), "{e}");
        let bad = r#"{"protocol": "nope", "topology": {"transit_stub": {"transit_domains": 1,
            "transit_routers_per_domain": 2, "stubs_per_transit_router": 1, "routers_per_stub": 2}},
            "workload": {"arrivals": [{"count": 3, "from_s": 0, "to_s": 0.1}]},
            "duration_s": 0.5, "sample_interval_s": 0.1}"#;
        let e = run_experiment(bad, "y.json", None).unwrap_err();
        assert!(e.contains("unknown session protocol") && e.contains("slbn"), "{e}");
        let bad = r#"{"protocol": "slbn", "protocol_params": {"join_lowers": true}, "topology": {"transit_stub": {"transit_domains": 1,
            "transit_routers_per_domain": 2, "stubs_per_transit_router": 1, "routers_per_stub": 2}},
            "workload": {"arrivals": [{"count": 3, "from_s": 0, "to_s": 0.1}]},
            "duration_s": 0.5, "sample_interval_s": 0.1}"#;
        let e = run_experiment(bad, "z.json", None).unwrap_err();
        assert!(e.contains("protocol_params") && e.contains("join_lowers"), "{e}");
    }
}
