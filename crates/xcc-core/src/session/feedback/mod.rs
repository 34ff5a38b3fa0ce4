//! Rate feedback for the closed-loop rate protocols (RCP, PIQI-RCP) in session experiments.
//!
//! In the packet simulator these protocols stamp a rate into every data packet and the
//! receiver echoes it in ACKs. Seed 004's experiments run them beside SLBN in the session
//! driver, whose data is fluid, so the stamp travels in a feedback packet instead: the source
//! sends one per round trip (what a window of ACKs would deliver: the path's rate as of one RTT
//! ago), each link lowers `rate` to its own advertised rate and notes the RTT the source carries,
//! the destination bounces it, the source adopts the rate. Links compute their rate on a timer
//! from the measured input (`LinkTask::on_tick`).

pub mod packet;
pub mod source;

pub use packet::FeedbackPacket;
pub use source::FeedbackSource;
