//! The run's results in the simulator's table layout (`{table: {column: [values]}}`, the
//! columns declared once in `xcc_build::schema`), so the Python side stores them as the same
//! Parquet files.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use xcc_build::scenario::model::{FlowKind, Scenario};

use crate::router::event_loop::Router;
use crate::run::outcome::{bytes_at, FlowOut, TxnOut};
use crate::run::plan::Plan;

/// The tables and the router's counters of a finished run.
pub fn tables(s: &Scenario, plan: &Plan, router: &Router, outs: &[FlowOut], txns: &[TxnOut]) -> Value {
    let node = |n: u32| s.nodes[n as usize].name.clone();
    let dur_s = s.duration_ns as f64 * 1e-9;
    let mut flows: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let push = |t: &mut BTreeMap<&'static str, Vec<Value>>, k: &'static str, v: Value| t.entry(k).or_default().push(v);
    for (i, f) in s.flows.iter().enumerate() {
        let o = &outs[i];
        let (cc, size) = match f.kind {
            FlowKind::Bulk { cc, size_bytes, .. } => (cc.name(), size_bytes.map_or(-1, |n| n as i64)),
            FlowKind::Cbr { .. } => ("none", -1),
            FlowKind::Session { protocol, size_bytes, .. } => (protocol.name(), size_bytes.map_or(-1, |n| n as i64)),
        };
        let start = f.start_ns as f64 * 1e-9;
        let end =
            if o.fct_s.is_finite() { start + o.fct_s } else { f.stop_ns.map_or(dur_s, |n| n as f64 * 1e-9).min(dur_s) };
        let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
        push(&mut flows, "flow_id", json!(i));
        push(&mut flows, "name", json!(f.name));
        let kind = match f.kind {
            FlowKind::Cbr { .. } => "cbr",
            FlowKind::Session { .. } => "session",
            FlowKind::Bulk { .. } => "bulk",
        };
        push(&mut flows, "kind", json!(kind));
        push(&mut flows, "src", json!(node(f.src)));
        push(&mut flows, "dst", json!(node(f.dst)));
        push(&mut flows, "cc", json!(cc));
        push(&mut flows, "start_s", json!(start));
        push(&mut flows, "stop_s", nan(f.stop_ns.map_or(f64::NAN, |n| n as f64 * 1e-9)));
        push(&mut flows, "size_bytes", json!(size));
        push(&mut flows, "bytes_sent", json!(o.bytes_sent));
        push(&mut flows, "bytes_delivered", json!(o.bytes_delivered));
        push(&mut flows, "goodput_bps", json!(o.bytes_delivered as f64 * 8.0 / (end - start).max(1e-9)));
        push(&mut flows, "fct_s", nan(o.fct_s));
        push(&mut flows, "packets_dropped", json!(-1));
        push(&mut flows, "retransmits", json!(o.retransmits));
        push(&mut flows, "timeouts", json!(o.timeouts));
        push(&mut flows, "fast_recoveries", json!(-1));
        push(&mut flows, "ecn_reductions", json!(-1));
        push(&mut flows, "ce_received", json!(o.ce_received));
        push(&mut flows, "min_rtt_s", nan(o.min_rtt_s));
        push(&mut flows, "srtt_s", nan(o.srtt_s));
        push(&mut flows, "window_capped", json!(-1)); // not measured by the emulator
        push(&mut flows, "rto_overdue", json!(-1));
    }
    for (k, t) in txns.iter().enumerate() {
        let g = &s.transactions[t.group];
        for (part, src, dst, size) in
            [("request", g.client, g.server, g.request_bytes), ("response", g.server, g.client, g.response_bytes)]
        {
            let i = s.flows.len() + 2 * k + usize::from(part == "response");
            let o = &outs[i];
            let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
            push(&mut flows, "flow_id", json!(i));
            push(&mut flows, "name", json!(format!("{}#{k}/{part}", g.name)));
            push(&mut flows, "kind", json!(part));
            push(&mut flows, "src", json!(node(src)));
            push(&mut flows, "dst", json!(node(dst)));
            push(&mut flows, "cc", json!(g.cc.name()));
            push(&mut flows, "start_s", json!(t.start_ns as f64 * 1e-9));
            push(&mut flows, "stop_s", json!(f64::NAN));
            push(&mut flows, "size_bytes", json!(size));
            push(&mut flows, "bytes_sent", json!(o.bytes_sent));
            push(&mut flows, "bytes_delivered", json!(o.bytes_delivered));
            let goodput = if o.fct_s > 0.0 { o.bytes_delivered as f64 * 8.0 / o.fct_s } else { f64::NAN };
            push(&mut flows, "goodput_bps", nan(goodput));
            push(&mut flows, "fct_s", nan(o.fct_s));
            push(&mut flows, "packets_dropped", json!(-1));
            push(&mut flows, "retransmits", json!(o.retransmits));
            push(&mut flows, "timeouts", json!(o.timeouts));
            push(&mut flows, "fast_recoveries", json!(-1));
            push(&mut flows, "ecn_reductions", json!(-1));
            push(&mut flows, "ce_received", json!(o.ce_received));
            push(&mut flows, "min_rtt_s", json!(f64::NAN));
            push(&mut flows, "srtt_s", json!(f64::NAN));
            push(&mut flows, "window_capped", json!(-1)); // not measured by the emulator
            push(&mut flows, "rto_overdue", json!(-1));
        }
    }
    let mut transactions: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for (k, t) in txns.iter().enumerate() {
        let g = &s.transactions[t.group];
        let nan = |x: f64| if x.is_finite() { json!(x) } else { json!(f64::NAN) };
        push(&mut transactions, "txn_id", json!(k));
        push(&mut transactions, "name", json!(g.name));
        push(&mut transactions, "client", json!(node(g.client)));
        push(&mut transactions, "server", json!(node(g.server)));
        push(&mut transactions, "request_bytes", json!(g.request_bytes));
        push(&mut transactions, "response_bytes", json!(g.response_bytes));
        push(&mut transactions, "start_s", json!(t.start_ns as f64 * 1e-9));
        push(&mut transactions, "response_time_s", nan(t.response_s));
        push(&mut transactions, "completion_time_s", nan(t.completion_s));
    }
    let mut links: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for (i, (l, e)) in s.links.iter().zip(&router.fabric.links).enumerate() {
        let st = &e.stats;
        push(&mut links, "link_id", json!(i));
        push(&mut links, "name", json!(l.name));
        push(&mut links, "src", json!(node(l.from)));
        push(&mut links, "dst", json!(node(l.to)));
        push(&mut links, "rate_bps", json!(l.rate_bps as f64));
        push(&mut links, "delay_s", json!(l.delay_ns as f64 * 1e-9));
        push(&mut links, "buffer_packets", json!(l.buffer.packets.map_or(-1, |n| n as i64)));
        push(&mut links, "buffer_bytes", json!(l.buffer.bytes.map_or(-1, |n| n as i64)));
        push(&mut links, "algorithm", json!(l.queue.name()));
        push(&mut links, "packets_in", json!(st.packets_in));
        push(&mut links, "bytes_in", json!(st.bytes_in));
        push(&mut links, "packets_out", json!(st.packets_out));
        push(&mut links, "bytes_out", json!(st.bytes_out));
        push(&mut links, "drops", json!(st.drops));
        push(&mut links, "marks", json!(st.marks));
        let (mq_b, mq_p) = mean_queue(&router.fabric.series, i as u32);
        push(&mut links, "mean_queue_bytes", json!(mq_b));
        push(&mut links, "mean_queue_packets", json!(mq_p));
        push(&mut links, "max_queue_bytes", json!(st.max_queue_bytes));
        push(&mut links, "mean_queue_delay_s", json!(mq_b * 8.0 / l.rate_bps as f64));
        push(&mut links, "utilisation", json!(st.bytes_out as f64 * 8.0 / (l.rate_bps as f64 * dur_s)));
        push(&mut links, "data_bytes_out", json!(st.data_bytes_out));
    }
    let mut link_series: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let mut prev: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    for r in &router.fabric.series {
        let (t0, b0, d0, m0) = prev.get(&r.link).copied().unwrap_or((0, 0, 0, 0));
        prev.insert(r.link, (r.time_ns, r.bytes_out, r.drops, r.marks));
        if r.time_ns <= t0 {
            continue;
        }
        let rate = (r.bytes_out - b0) as f64 * 8.0 / ((r.time_ns - t0) as f64 * 1e-9);
        let cap = s.links[r.link as usize].rate_bps as f64;
        push(&mut link_series, "time_s", json!(r.time_ns as f64 * 1e-9));
        push(&mut link_series, "link_id", json!(r.link));
        push(&mut link_series, "rate_bps", json!(rate));
        push(&mut link_series, "utilisation", json!(rate / cap));
        push(&mut link_series, "queue_bytes", json!(r.queue_bytes));
        push(&mut link_series, "queue_packets", json!(r.queue_packets));
        push(&mut link_series, "drops", json!(r.drops - d0));
        push(&mut link_series, "marks", json!(r.marks - m0));
        push(&mut link_series, "gauge", json!(r.gauge));
    }
    let mut flow_series: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let interval = s.metrics.interval_ns as f64 * 1e-9;
    if interval > 0.0 {
        for (i, o) in outs.iter().enumerate() {
            let mut k = 1;
            let mut last = 0u64;
            while k as f64 * interval <= dur_s + 1e-9 {
                let t = k as f64 * interval;
                let upto = o.samples.iter().take_while(|x| x.0 <= t).last();
                let delivered = bytes_at(&o.samples, t);
                let srtt = upto.map_or(f64::NAN, |x| x.2);
                push(&mut flow_series, "time_s", json!(t));
                push(&mut flow_series, "flow_id", json!(i));
                push(&mut flow_series, "rate_bps", json!((delivered - last) as f64 * 8.0 / interval));
                push(&mut flow_series, "cwnd_bytes", json!(-1));
                push(&mut flow_series, "ssthresh_bytes", json!(-1));
                push(&mut flow_series, "srtt_s", json!(if srtt.is_finite() && srtt > 0.0 { srtt } else { f64::NAN }));
                push(&mut flow_series, "bytes_in_flight", json!(-1));
                push(&mut flow_series, "delivered_bytes", json!(delivered));
                // The kernel's controller state is not sampled over time (null).
                push(&mut flow_series, "pacing_rate_bps", json!(f64::NAN));
                push(&mut flow_series, "cc_state", json!(""));
                push(&mut flow_series, "pacing_gain", json!(f64::NAN));
                last = delivered;
                k += 1;
            }
        }
    }
    let written = [
        ("flows", &flows),
        ("links", &links),
        ("flow_series", &flow_series),
        ("link_series", &link_series),
        ("transactions", &transactions),
    ];
    for (name, table) in written {
        // The schema is declared once (xcc_build::schema); writing another column is a bug.
        if let Err(e) = xcc_build::schema::check_columns(name, table.keys().copied()) {
            panic!("{e}");
        }
    }
    let st = &router.fabric.stats;
    json!({
        "tables": {
            "flows": flows,
            "links": links,
            "flow_series": flow_series,
            "link_series": link_series,
            "transactions": transactions,
        },
        "stats": {
            "mode": "emu",
            // What `xcc` prints for every run: here packets the router read and link crossings.
            "sim_seconds": dur_s,
            "events": st.packets_read,
            "packet_hops": router.fabric.links.iter().map(|l| l.stats.delivered_packets).sum::<u64>(),
            "packets_read": st.packets_read,
            "forwarded": st.forwarded,
            "dropped_by_links": st.dropped_by_links,
            "malformed_header": st.malformed_header,
            "not_ipv4": st.not_ipv4,
            "bad_ipv4": st.bad_ipv4,
            "bad_ipv4_checksum": st.bad_ipv4_checksum,
            "unroutable": st.unroutable,
            "ce_written": st.ce_written,
            "header_rewrites": st.header_rewrites,
            "lateness_p50_us": st.lateness_quantile_us(0.5),
            "lateness_p99_us": st.lateness_quantile_us(0.99),
            "lateness_max_us": st.lateness_max_us,
            "super_packets": st.super_packets,
            "bad_offload": st.bad_offload,
            "hosts": plan.hosts.iter().map(|h| h.name.clone()).collect::<Vec<_>>(),
        },
    })
}

/// Time-average queue from the samples (bytes, packets); zero without samples.
fn mean_queue(series: &[crate::router::fabric::LinkSample], link: u32) -> (f64, f64) {
    let rows: Vec<_> = series.iter().filter(|r| r.link == link).collect();
    if rows.is_empty() {
        return (0.0, 0.0);
    }
    let n = rows.len() as f64;
    (
        rows.iter().map(|r| r.queue_bytes as f64).sum::<f64>() / n,
        rows.iter().map(|r| r.queue_packets as f64).sum::<f64>() / n,
    )
}
