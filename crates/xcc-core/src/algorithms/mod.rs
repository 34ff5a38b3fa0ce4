//! The algorithms, one folder each: everything that *is* an algorithm lives in its folder — its
//! link law (`link.rs`, what a router runs per output port), its host law (`host.rs`, the
//! sender's controller and the receiver's echoer), its header (`header.rs`, an `impl
//! HeaderBody`), its session form (`session.rs`, seed 004's tasks) and its typed parameters
//! (`mod.rs`: serde structs with defaults citing their source and a `check()` naming the field),
//! for whichever roles it plays. Unit tests from the paper's equations sit beside the law.
//!
//! docs/architecture.md, "Adding an algorithm", is the recipe.

pub mod bbr;
pub mod cubic;
