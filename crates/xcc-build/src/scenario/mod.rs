//! Scenarios: the TOML (or JSON) description of an experiment, resolved into integers.

pub mod error;
pub mod memory;
pub mod model;
pub mod resolve;
pub mod spec;

pub use error::ScenarioError;
pub use model::Scenario;
pub use resolve::{resolve, Format};
