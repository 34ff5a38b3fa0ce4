//! The hosts' traffic, in their namespaces: xcclab's transport over UDP on real sockets
//! ([`udp_transport`], its datagrams due together sent with one system call by
//! [`send_batch`]), Linux TCP applications ([`apps`]: bulk, transactions), constant-rate UDP
//! ([`cbr`]) and seed 004's session sources and destinations ([`sessions`]).

pub mod apps;
pub mod cbr;
pub mod send_batch;
pub mod sessions;
pub mod udp_transport;
