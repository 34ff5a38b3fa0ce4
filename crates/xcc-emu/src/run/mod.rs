//! Orchestration: what a run checks before touching anything ([`preflight`]), a resolved
//! scenario turned into namespaces, ports, links and routes ([`plan`]), the run itself
//! ([`runner`]), the stack MaxNet flows take ([`stack`]), the `xcc-emu` command line ([`cli`])
//! and the router's benchmark ([`mod@bench`]).

pub mod bench;
pub mod cli;
pub mod plan;
pub mod preflight;
pub mod runner;
pub mod stack;

pub use stack::Stack;
