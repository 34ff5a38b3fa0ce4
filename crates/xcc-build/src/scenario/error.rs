//! Scenario errors name the file, the field and what was expected.

use core::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A bad scenario: `source: path: message`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file (or `<python>` for scenarios built in Python).
    pub source: String,
    /// The field, e.g. `link[2].rate` or `flow[0] (i=3).dst`.
    pub path: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.source, self.message)
        } else {
            write!(f, "{}: {}: {}", self.source, self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Deserialises `value` into `T`, naming the offending field on error.
pub fn typed<T: DeserializeOwned>(value: Value, prefix: &str, source: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = match (prefix.is_empty(), inner == ".") {
            // The document itself (wrong type, a missing top-level field the message names).
            (true, true) => "(top level)".to_string(),
            (true, false) => inner,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{inner}"),
        };
        ScenarioError { source: source.to_string(), path, message: e.into_inner().to_string() }
    })
}
