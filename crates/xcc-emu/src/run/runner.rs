//! `xcc-emu run`: a whole scenario on real packets. Namespaces for the hosts, the router in
//! its own thread, NewReno flows on Linux TCP sockets, explicit protocols on xcclab's UDP
//! transport, and the results in the simulator's table layout, so the Python side stores them
//! as the same Parquet files.
//!
//! [`emulate_on`] reads as its steps, each in a function or module of its own:
//! 1. preflight and plan ([`super::preflight`], [`super::host_settings`], [`super::paths`]):
//!    nothing on the machine is touched yet;
//! 2. namespaces and TUN devices (`os::netns::Topology`);
//! 3. the router, attached to every TUN ([`super::router_thread`]);
//! 4. time zero, with the machine's conditions for the run lifted (`RunConditions`);
//! 5. the hosts' traffic per stack, run to the end or a signal ([`super::traffic`], with
//!    [`super::stop_watch`] cutting every wait short on a signal);
//! 6. the outcomes collected ([`super::collect`]);
//! 7. teardown (`teardown`): the router stops, the namespaces go;
//! 8. the verdict on losses outside the model (`check_losses`), the tables
//!    ([`super::tables`]) and the run's statistics (`record_stats`).
//!
//! Everything made is removed at the end, on error and on SIGINT/SIGTERM (the flows stop, the
//! router stops, the namespaces go); `xcc-emu cleanup` removes what a killed run left.

use std::io;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use xcc_build::scenario::model::Scenario;

use crate::os::netns::{self, DevCounters, HostNs, Topology};
use crate::os::signals::STOP;
use crate::os::sys;
use crate::os::sysctl_lift::Lift;
use crate::router::event_loop::Router;
use crate::router::fabric::FabricStats;
use crate::run::collect::{collect, Collected};
use crate::run::host_settings::host_plan;
use crate::run::paths::Paths;
use crate::run::router_thread::RouterThread;
pub use crate::run::stack::Stack;
use crate::run::stop_watch::StopWatch;
use crate::run::tables::tables;
use crate::run::traffic::{Clock, Traffic};

/// What one emulated run produced.
pub struct EmuOutput {
    /// `{"tables": {...}, "stats": {...}, "resolved": ...}` like the simulator's native output.
    pub json: Value,
    pub router: FabricStats,
    pub kernel: Vec<DevCounters>,
}

/// Runs scenario `s`; fails with a clear message when the machine cannot (not root, no TUN),
/// when the scenario asks for traffic the emulator does not carry yet, or when the kernel
/// dropped packets at a TUN device (the run would not mean what it says).
pub fn emulate(s: &Scenario) -> io::Result<EmuOutput> {
    emulate_on(s, Stack::Udp)
}

/// [`emulate`] with MaxNet flows on the given stack.
pub fn emulate_on(s: &Scenario, stack: Stack) -> io::Result<EmuOutput> {
    // 1. Preflight and plan, from the network the simulator builds too (a `[sessions]` table
    // expanded into its hosts, links and session flows: `s` is that scenario from here on).
    let header_bytes = crate::run::preflight::check(s, stack)?;
    if stack == Stack::Kernel {
        crate::run::preflight::check_registered(s)?;
    }
    let network = xcc_build::Network::build(s.clone())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("xcc emu: {e}")))?;
    crate::run::preflight::check_sessions(&network.scenario)?;
    let mut plan = host_plan(network, stack, header_bytes);
    let expanded = plan.scenario.clone();
    let s = &expanded;
    let paths = Paths::of(s, &plan);
    let hosts = plan.hosts.clone();
    // 2. Namespaces and TUN devices.
    let mut topo = Topology::create(hosts.clone())?;
    // 3. The router, attached to every namespace's TUN before the traffic starts.
    let router = RouterThread::start(&mut plan, s.metrics.interval_ns)?;
    netns::wait_until_running(&hosts, Duration::from_secs(2));
    if STOP.load(Ordering::Relaxed) {
        // Stopped while setting up: nothing has started; the router goes, then the namespaces.
        router.abandon();
        topo.destroy()?;
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    // 4. Time zero. Count drops from here on only: the run's traffic starts now, and a packet
    // the kernel sent on its own before is not the run's.
    let kernel_before = kernel_counters(&hosts);
    let mut conditions = RunConditions::lift();
    let clock =
        Clock { t0: Instant::now(), zero_ns: sys::monotonic_ns(), duration: Duration::from_nanos(s.duration_ns) };
    router.start_clock(clock.zero_ns);
    // 5. The hosts' traffic, to the end of the run or a stop.
    let stop_watch = StopWatch::start();
    let mut traffic = Traffic::start(s, stack, &plan, &paths, clock, &stop_watch.cbr_stop)?;
    let udp = traffic.run_to_end(s, clock);
    // 6. The outcomes.
    let mut collected = collect(s, traffic, udp, &paths, &stop_watch.cbr_stop)?;
    // 7. Teardown.
    let (router, kernel) =
        teardown(router, stop_watch, &mut conditions, topo, &hosts, &kernel_before, &paths, &collected)?;
    let router = router?;
    // 8. Verdict, tables and statistics.
    if let Some(e) = collected.first_err.take() {
        return Err(e);
    }
    if STOP.load(Ordering::Relaxed) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    check_losses(&kernel, &router, collected.send_failures)?;
    let mut json = tables(s, &plan, &router, &collected.outs, &collected.txns);
    record_stats(&mut json, &kernel, &router, &collected, &conditions)?;
    Ok(EmuOutput { json, router: router.fabric.stats.clone(), kernel })
}

/// Each host's TUN and UDP counters.
fn kernel_counters(hosts: &[HostNs]) -> Vec<DevCounters> {
    hosts.iter().map(|h| netns::host_counters(&h.path(), netns::TUN_DEV).unwrap_or_default()).collect()
}

/// What the machine is asked for while a run lasts, given back when dropped.
struct RunConditions {
    /// A halted vCPU wakes hundreds of microseconds late (docs/emu.md): the CPUs are kept out
    /// of deep idle for the run. `XCC_EMU_KEEP_AWAKE=0` turns this off, `=spin` uses spinners.
    awake: Option<sys::KeepAwake>,
    keep_awake_method: &'static str,
    /// A deep receive backlog and no real-time throttling (sysctl_lift.rs).
    backlog: Lift,
    rt_throttling: Lift,
}

impl RunConditions {
    fn lift() -> RunConditions {
        let awake = match std::env::var("XCC_EMU_KEEP_AWAKE").as_deref() {
            Ok("0") => None,
            Ok("spin") => Some(sys::KeepAwake::spinners()),
            _ => Some(sys::KeepAwake::start()),
        };
        let keep_awake_method = awake.as_ref().map_or("off", |a| a.method());
        let rt_throttling = Lift::rt_throttling();
        let backlog = Lift::receive_backlog();
        RunConditions { awake, keep_awake_method, backlog, rt_throttling }
    }
}

/// The end of a run, stopped or not: the last TCP FIN/ACKs cross, the router stops, the CPUs
/// may sleep again, the hosts' counters are read and the namespaces go. Gives the router's
/// outcome and the kernel counters since time zero.
#[allow(clippy::too_many_arguments)]
fn teardown(
    router: RouterThread,
    stop_watch: StopWatch,
    conditions: &mut RunConditions,
    mut topo: Topology,
    hosts: &[HostNs],
    kernel_before: &[DevCounters],
    paths: &Paths,
    collected: &Collected,
) -> io::Result<(io::Result<Router>, Vec<DevCounters>)> {
    // Let the last FIN/ACK exchanges cross the router before it stops: a socket left in
    // LAST_ACK retransmits into a dismantled namespace for minutes and keeps its congestion
    // control (kernel MaxNet's BPF map) alive that long.
    if collected.had_tcp && !STOP.load(Ordering::Relaxed) {
        let longest = paths.two_way.iter().copied().max().unwrap_or(0);
        thread::sleep(Duration::from_nanos(3 * longest) + Duration::from_millis(50));
    }
    router.tell_stop();
    stop_watch.end();
    let router = router.join()?;
    conditions.awake = None;
    let kernel: Vec<DevCounters> = hosts
        .iter()
        .zip(kernel_before)
        .map(|(h, before)| netns::host_counters(&h.path(), netns::TUN_DEV).map(|c| c.since(before)))
        .collect::<io::Result<_>>()?;
    topo.destroy()?;
    Ok((router, kernel))
}

/// Losses outside the modelled links make the results describe another network: fail.
fn check_losses(kernel: &[DevCounters], router: &Router, send_failures: u64) -> io::Result<()> {
    let tun: u64 = kernel.iter().map(|k| k.tx_dropped + k.rx_dropped).sum::<u64>() + router.fabric.stats.write_failures;
    if tun > 0 {
        return Err(io::Error::other(format!(
            "the kernel dropped {tun} packet(s) at the TUN devices (router too slow for this load): {kernel:?}"
        )));
    }
    let udp: u64 = kernel.iter().map(|k| k.udp_rcvbuf_errors + k.udp_sndbuf_errors).sum::<u64>() + send_failures;
    if udp > 0 {
        return Err(io::Error::other(format!(
            "the hosts' UDP sockets dropped {udp} datagram(s) (full receive buffer or refused send: the \
             transport driver too slow for this load; {send_failures} refused sends): {kernel:?}"
        )));
    }
    Ok(())
}

/// The run's own statistics beside the router's: the checks that passed, how the hosts and the
/// router ran, and seed 004's sessions' control traffic.
fn record_stats(
    json: &mut Value,
    kernel: &[DevCounters],
    router: &Router,
    collected: &Collected,
    conditions: &RunConditions,
) -> io::Result<()> {
    let udp = &collected.udp;
    let stats = &mut json["stats"];
    // Zero in every run that gets here; recorded so that run.json says they were checked.
    stats["kernel_tun_tx_dropped"] = json!(kernel.iter().map(|k| k.tx_dropped).sum::<u64>());
    stats["kernel_tun_rx_dropped"] = json!(kernel.iter().map(|k| k.rx_dropped).sum::<u64>());
    stats["kernel_udp_rcvbuf_errors"] = json!(kernel.iter().map(|k| k.udp_rcvbuf_errors).sum::<u64>());
    stats["kernel_udp_sndbuf_errors"] = json!(kernel.iter().map(|k| k.udp_sndbuf_errors).sum::<u64>());
    // Stalls: how late the hosts' transport woke at worst (a host without a CPU sends nothing).
    stats["host_wake_late_max_us"] = json!(udp.wake_late_max_ns / 1000);
    // Whether the router and the hosts' transport ran at real-time priority (refused without
    // CAP_SYS_NICE or an RLIMIT_RTPRIO; then other work on the machine can delay them).
    stats["router_realtime"] = json!(router.realtime);
    stats["tun_offload"] = json!(router.offload);
    // The router thread's share of a CPU: near 0.95 the kernel's real-time throttling stalls it.
    stats["router_cpu_share"] = json!(router.cpu_ns as f64 / (router.wall_ns as f64).max(1.0));
    stats["gro_writes"] = json!(router.coalesce.as_ref().map_or(0, |c| c.merged_writes));
    stats["gro_segments"] = json!(router.coalesce.as_ref().map_or(0, |c| c.merged_segments));
    stats["hosts_realtime"] = json!(collected.hosts_realtime);
    // xcclab's transport: datagrams sent several to a system call (send_batch.rs).
    stats["transport_data_batches"] = json!(udp.data_batches.0);
    stats["transport_data_batched"] = json!(udp.data_batches.1);
    stats["transport_ack_batches"] = json!(udp.ack_batches.0);
    stats["transport_acks_batched"] = json!(udp.ack_batches.1);
    stats["transport_reads"] = json!(udp.reads.0);
    stats["transport_datagrams_read"] = json!(udp.reads.1);
    // Whether the transport's loop kept up: its share of a CPU, how often it was preempted,
    // and the sending time its pacers lost to a loop later than the catch-up.
    stats["transport_cpu_share"] = json!(udp.cpu_ns as f64 / (udp.wall_ns as f64).max(1.0));
    stats["transport_preempted"] = json!(udp.preempted);
    stats["transport_pacing_lost_us"] = json!(udp.pacing_lost_ns / 1000);
    stats["transport_pacing_late_max_us"] = json!(udp.pacing_late_max_ns / 1000);
    stats["keep_awake"] = json!(conditions.keep_awake_method);
    stats["rt_throttling_lifted"] = json!(conditions.rt_throttling.lifted());
    stats["receive_backlog_raised"] = json!(conditions.backlog.lifted());
    if let (Some(sr), Some(run)) = (router.fabric.sessions.as_ref(), collected.sessions.as_ref()) {
        // Seed 004's sessions: control packets through the link tasks, and the hosts' side.
        let held = sr.check().map_err(io::Error::other)?;
        stats["session_control_read"] = json!(sr.stats.control_read);
        stats["session_control_absorbed"] = json!(sr.stats.control_absorbed);
        stats["session_control_in_router_at_end"] = json!(held);
        stats["session_data_read"] = json!(sr.stats.data_read);
        stats["session_malformed"] = json!(sr.stats.malformed);
        stats["session_control_sent"] = json!(run.sessions.iter().map(|r| r.control_sent).sum::<u64>());
        stats["session_control_back"] = json!(run.sessions.iter().map(|r| r.control_back).sum::<u64>());
        stats["session_unreadable"] = json!(run.unreadable);
        stats["session_wake_late_max_us"] = json!(run.wake_late_max_ns / 1000);
        let lost = run.sessions.iter().map(|r| r.pacing_lost_ns);
        stats["session_pacing_lost_max_us"] = json!(lost.clone().max().unwrap_or(0) / 1000);
        stats["session_pacing_lost_total_us"] = json!(lost.sum::<u64>() / 1000);
        stats["session_hosts_realtime"] = json!(run.realtime);
    }
    Ok(())
}
