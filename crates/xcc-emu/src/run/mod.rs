//! Orchestration: what a run checks before touching anything ([`preflight`]), a resolved
//! scenario turned into namespaces, ports, links and routes ([`plan`]), the run itself
//! ([`runner`], in steps: [`host_settings`], [`paths`], [`router_thread`], [`traffic`],
//! [`stop_watch`], [`collect`], [`outcome`], [`tables`]), the stack MaxNet flows take
//! ([`stack`]), the `xcc-emu` command line ([`cli`]) and the router's benchmark ([`mod@bench`]).

pub mod bench;
pub mod cli;
pub mod collect;
pub mod host_settings;
pub mod outcome;
pub mod paths;
pub mod plan;
pub mod preflight;
pub mod router_thread;
pub mod runner;
pub mod stack;
pub mod stop_watch;
pub mod tables;
pub mod traffic;

pub use stack::Stack;
