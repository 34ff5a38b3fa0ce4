//! Scenario errors name the file, the field and what was expected.

use core::fmt;

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
