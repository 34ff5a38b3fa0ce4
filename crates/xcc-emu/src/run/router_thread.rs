//! The router in a thread of its own: opened on the plan's fabric and attached to every
//! namespace's TUN device, then waiting for the run's time zero, then forwarding until told
//! to stop.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crate::router::event_loop::Router;
use crate::router::fabric::Fabric;
use crate::run::plan::Plan;

/// A started router thread.
pub struct RouterThread {
    handle: JoinHandle<io::Result<Router>>,
    stop: Arc<AtomicBool>,
    zero: mpsc::Sender<u64>,
}

impl RouterThread {
    /// Starts the router on the plan's fabric (taken out of `plan`), sampling the links every
    /// `interval_ns` (0: never); returns once it is attached to every TUN device, or with the
    /// error that kept it from attaching.
    pub fn start(plan: &mut Plan, interval_ns: u64) -> io::Result<RouterThread> {
        let att = plan.attachments();
        let fabric = std::mem::replace(&mut plan.fabric, Fabric::empty());
        let stop = Arc::new(AtomicBool::new(false));
        let stop_r = stop.clone();
        let (attached_tx, attached_rx) = mpsc::channel::<()>();
        let (zero_tx, zero_rx) = mpsc::channel::<u64>();
        let handle = thread::spawn(move || -> io::Result<Router> {
            let mut r = Router::open(fabric, &att)?;
            r.sample_every = (interval_ns > 0).then_some(interval_ns);
            let _ = attached_tx.send(());
            // The run's time zero is when the traffic starts, so the links' series and the
            // flows' share one clock (as in the simulator).
            if let Ok(zero) = zero_rx.recv() {
                r.t0_ns = zero;
            }
            r.run(&stop_r, None)?;
            Ok(r)
        });
        if attached_rx.recv().is_err() {
            return Err(match handle.join() {
                Ok(Err(e)) => e,
                _ => io::Error::other("the router thread ended before attaching"),
            });
        }
        Ok(RouterThread { handle, stop, zero: zero_tx })
    }

    /// The run's time zero (`CLOCK_MONOTONIC` ns): the router starts its clock and forwards.
    pub fn start_clock(&self, zero_ns: u64) {
        let _ = self.zero.send(zero_ns);
    }

    /// Stopped before time zero: the router goes at once (it waits for a time zero that never
    /// comes: the channel closes).
    pub fn abandon(self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.zero);
        let _ = self.handle.join();
    }

    /// Tells the router to stop (it ends within one loop turn); [`RouterThread::join`] waits.
    pub fn tell_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the stopped router: its counters and series, or its error.
    pub fn join(self) -> io::Result<io::Result<Router>> {
        self.handle.join().map_err(|_| io::Error::other("router thread panicked"))
    }
}
