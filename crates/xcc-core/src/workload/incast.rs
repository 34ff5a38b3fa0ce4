//! Incast requests (N-to-1), to mix with the Poisson background of [`super::poisson`]: every
//! host issues requests as a Poisson process of `requests_per_sec`; a request picks
//! `fan_in` distinct other hosts, and each sends `request_bytes / fan_in` to the requester at
//! the request's instant. This is the query traffic of the PowerTCP authors' workload code
//! (`powertcp-evaluation-workload.cc`, `install_applications_queryNew`: `requestSize / fan` from
//! each of `fan` responders, Poisson request arrivals per server), with two differences said
//! here: responders are drawn among all other hosts without repetition (the code draws them
//! with replacement from one other leaf; a topology-aware choice belongs to the fabric), and
//! the request rate is per host as in the code.
//!
//! Deterministic: host h draws from stream `2^32 + h` of the generator kind (the Poisson
//! background uses streams 0..hosts), in the order inter-arrival, responders.

use super::poisson::Flow;
use crate::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use crate::time::{Dur, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Stream offset of the incast generator within [`kind::GENERATOR`].
const INCAST_STREAMS: u64 = 1 << 32;

/// One request: `senders` each send `bytes_per_sender` to `receiver` from `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncastRequest {
    pub start: Time,
    pub receiver: u32,
    pub senders: Vec<u32>,
    pub bytes_per_sender: u64,
}

impl IncastRequest {
    /// The request's flows, one per sender, in the order of `senders`.
    pub fn flows(&self) -> impl Iterator<Item = Flow> + '_ {
        self.senders.iter().map(move |&src| Flow {
            start: self.start,
            src,
            dst: self.receiver,
            size_bytes: self.bytes_per_sender,
        })
    }
}

/// Why an incast workload cannot be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum IncastError {
    /// The fan-in must be at least 1 and below the number of hosts.
    FanIn { fan_in: u32, hosts: u32 },
    /// The request rate must be positive and finite.
    Rate { requests_per_sec: f64 },
    /// A request must ask for at least one byte per sender.
    RequestTooSmall { request_bytes: u64, fan_in: u32 },
}

impl core::fmt::Display for IncastError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            IncastError::FanIn { fan_in, hosts } => {
                write!(f, "incast fan_in {fan_in} must be between 1 and hosts − 1 ({})", hosts.saturating_sub(1))
            }
            IncastError::Rate { requests_per_sec } => {
                write!(f, "incast requests_per_sec {requests_per_sec} must be positive")
            }
            IncastError::RequestTooSmall { request_bytes, fan_in } => {
                write!(f, "incast request_bytes {request_bytes} gives less than 1 byte to each of {fan_in} senders")
            }
        }
    }
}
impl std::error::Error for IncastError {}

/// The request generator: an iterator of [`IncastRequest`]s issued before `until`.
pub struct IncastRequests {
    hosts: u32,
    fan_in: u32,
    bytes_per_sender: u64,
    mean_gap_s: f64,
    until: Time,
    rngs: Vec<Pcg64Mcg>,
    next: BinaryHeap<Reverse<(Time, u32)>>,
}

impl IncastRequests {
    /// Requests among `hosts` hosts, each host issuing `requests_per_sec` on average, each
    /// request `request_bytes` from `fan_in` senders, in `[0, until)`, from `seed`.
    pub fn new(
        hosts: u32,
        fan_in: u32,
        request_bytes: u64,
        requests_per_sec: f64,
        until: Time,
        seed: u64,
    ) -> Result<IncastRequests, IncastError> {
        if fan_in == 0 || fan_in >= hosts {
            return Err(IncastError::FanIn { fan_in, hosts });
        }
        if !(requests_per_sec > 0.0 && requests_per_sec.is_finite()) {
            return Err(IncastError::Rate { requests_per_sec });
        }
        let bytes_per_sender = request_bytes / fan_in as u64;
        if bytes_per_sender == 0 {
            return Err(IncastError::RequestTooSmall { request_bytes, fan_in });
        }
        let mut g = IncastRequests {
            hosts,
            fan_in,
            bytes_per_sender,
            mean_gap_s: 1.0 / requests_per_sec,
            until,
            rngs: (0..hosts).map(|h| component_rng(seed, kind::GENERATOR, INCAST_STREAMS + h as u64)).collect(),
            next: BinaryHeap::with_capacity(hosts as usize),
        };
        for h in 0..hosts {
            let first = Time::ZERO + g.gap(h);
            g.next.push(Reverse((first, h)));
        }
        Ok(g)
    }

    fn gap(&mut self, h: u32) -> Dur {
        let u = uniform01(&mut self.rngs[h as usize]);
        Dur::from_secs_f64(-(1.0 - u).ln() * self.mean_gap_s)
    }
}

impl Iterator for IncastRequests {
    type Item = IncastRequest;

    fn next(&mut self) -> Option<IncastRequest> {
        let Reverse((start, receiver)) = self.next.pop()?;
        if start >= self.until {
            self.next.clear();
            return None;
        }
        let following = start + self.gap(receiver);
        self.next.push(Reverse((following, receiver)));
        // Partial Fisher-Yates over the other hosts: `fan_in` distinct senders.
        let rng = &mut self.rngs[receiver as usize];
        let mut others: Vec<u32> = (0..self.hosts).filter(|&h| h != receiver).collect();
        for i in 0..self.fan_in as usize {
            let j = i + ((uniform01(rng) * (others.len() - i) as f64) as usize).min(others.len() - i - 1);
            others.swap(i, j);
        }
        others.truncate(self.fan_in as usize);
        Some(IncastRequest { start, receiver, senders: others, bytes_per_sender: self.bytes_per_sender })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_inputs_are_named() {
        let g = |hosts, fan_in, bytes, rate| IncastRequests::new(hosts, fan_in, bytes, rate, Time::from_ns(1), 1).err();
        assert_eq!(g(16, 0, 1000, 1.0), Some(IncastError::FanIn { fan_in: 0, hosts: 16 }));
        assert_eq!(g(16, 16, 1000, 1.0), Some(IncastError::FanIn { fan_in: 16, hosts: 16 }));
        assert_eq!(g(16, 15, 1000, 0.0), Some(IncastError::Rate { requests_per_sec: 0.0 }));
        assert_eq!(g(16, 15, 14, 1.0), Some(IncastError::RequestTooSmall { request_bytes: 14, fan_in: 15 }));
        assert_eq!(g(16, 15, 15, 1.0), None);
    }

    // 16 hosts, 1,000 requests/s each, for 1 s: about 16,000 requests (within 3 %, the count's
    // relative standard deviation is 0.8 %); each 2 MB from 5 distinct other hosts, 400,000 B
    // each; every host a receiver about 1,000 times.
    #[test]
    fn requests_have_distinct_senders_and_the_asked_rate() {
        let g = IncastRequests::new(16, 5, 2_000_000, 1000.0, Time::from_ns(1_000_000_000), 9).unwrap();
        let mut n = 0;
        let mut per_receiver = [0u32; 16];
        let mut sent_by = [0u32; 16];
        let mut last = Time::ZERO;
        for r in g {
            assert!(r.start >= last);
            last = r.start;
            assert_eq!(r.senders.len(), 5);
            let mut s = r.senders.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 5, "distinct senders");
            assert!(!r.senders.contains(&r.receiver));
            let flows: Vec<Flow> = r.flows().collect();
            assert!(flows.iter().all(|f| f.dst == r.receiver && f.size_bytes == 400_000 && f.start == r.start));
            for &h in &r.senders {
                sent_by[h as usize] += 1;
            }
            per_receiver[r.receiver as usize] += 1;
            n += 1;
        }
        assert!((n as f64 / 16_000.0 - 1.0).abs() < 0.03, "{n} requests");
        for c in per_receiver {
            assert!((c as f64 / 1000.0 - 1.0).abs() < 0.12, "a host asked {c} times");
        }
        // Senders are spread evenly: each host serves about 5 x 16,000 / 16 = 5,000 times.
        for c in sent_by {
            assert!((c as f64 / 5000.0 - 1.0).abs() < 0.06, "a host served {c} times");
        }
    }

    #[test]
    fn deterministic_and_apart_from_the_background() {
        let run = |seed| -> Vec<IncastRequest> {
            IncastRequests::new(8, 7, 1_000_000, 5000.0, Time::from_ns(10_000_000), seed).unwrap().collect()
        };
        let a = run(4);
        assert!(a.len() > 100);
        assert_eq!(a, run(4));
        assert_ne!(a, run(5));
        // Fan-in 7 of 8 hosts: every other host sends.
        assert!(a.iter().all(|r| r.senders.len() == 7));
    }
}
