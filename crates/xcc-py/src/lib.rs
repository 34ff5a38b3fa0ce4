//! `xcclab._native`: the thin PyO3 layer over the simulator. Scenarios come in as text (TOML
//! from files, JSON from the Python builder); results go out as plain dicts of columns, which
//! the Python side turns into polars DataFrames and Parquet files.

/// mimalloc rather than the C library's malloc: a large simulation's working set (10^5-10^6
/// links, each with its own small queue, and 10^6 packets in flight) is gigabytes touched at
/// random, so most of a packet-hop's time is TLB and cache misses. mimalloc's aligned segments
/// are backed by transparent huge pages on every run (glibc's malloc with
/// `glibc.malloc.hugetlb=1` only on some), and its size classes keep the small queues together
/// (docs/performance.md, "the allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod panic_log;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use xcc_sim::output::{Column, Table};
use xcc_sim::{Format, RunError};

fn format_of(format: &str) -> PyResult<Format> {
    match format {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!("format must be \"toml\" or \"json\", not {other:?}"))),
    }
}

fn table_to_dict<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let list = match col {
            Column::F64(v) => PyList::new(py, v)?,
            Column::I64(v) => PyList::new(py, v)?,
            Column::Str(v) => PyList::new(py, v)?,
        };
        d.set_item(name, list)?;
    }
    Ok(d)
}

/// The xcclab version this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Resolves a scenario and returns it as JSON; raises ValueError naming file, field and
/// expectation if it is bad.
#[pyfunction]
#[pyo3(signature = (text, source, format = "toml"))]
fn validate(text: &str, source: &str, format: &str) -> PyResult<String> {
    let s = xcc_sim::resolve(text, source, format_of(format)?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // Routes (and a `[sessions]` table) are checked when the network is built.
    xcc_sim::Network::build(s.clone()).map_err(|mut e| {
        e.source = source.to_string();
        PyValueError::new_err(e.to_string())
    })?;
    serde_json::to_string(&s).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Runs a scenario; returns {"resolved", "seed", "stats", "tables"}, and with
/// `pcap_link="a->b"` also "pcap": the packets departing that link direction as a list of
/// (time_ns, header bytes, original length) (see xcc_sim::capture for the encoding).
/// `threads`: the parallel engine's threads (the same results for any number; stats gets
/// "domains", the number of parts the network was cut into, 1 for the serial engine).
#[pyfunction]
#[pyo3(signature = (text, source, format = "toml", seed = None, metrics = true, progress = None, pcap_link = None, threads = 1))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    seed: Option<u64>,
    metrics: bool,
    progress: Option<PyObject>,
    pcap_link: Option<&str>,
    threads: usize,
) -> PyResult<PyObject> {
    let fmt = format_of(format)?;
    if threads == 0 {
        return Err(PyValueError::new_err("threads: expected at least 1"));
    }
    let mut callback_error: Option<PyErr> = None;
    // Without the GIL: the wrapper's main thread can take a signal (and stop the run's
    // real-packet half, docs/emu.md) while a simulation runs in a worker thread.
    let result = py.allow_threads(|| {
        let mut report = |fraction: f64| {
            if let (Some(cb), true) = (&progress, callback_error.is_none()) {
                if let Err(e) = Python::with_gil(|py| cb.call1(py, (fraction,))) {
                    callback_error = Some(e);
                }
            }
        };
        xcc_sim::run_text_threads(text, source, fmt, seed, metrics, pcap_link, threads, Some(&mut report))
    });
    if let Some(e) = callback_error {
        return Err(e);
    }
    let (scenario, out, domains) = result.map_err(|e| match e {
        RunError::Scenario(s) => PyValueError::new_err(s.to_string()),
        e @ RunError::Invariant(_) => PyRuntimeError::new_err(e.to_string()),
    })?;
    let d = PyDict::new(py);
    d.set_item("resolved", serde_json::to_string(&scenario).map_err(|e| PyRuntimeError::new_err(e.to_string()))?)?;
    d.set_item("seed", scenario.seed)?;
    let stats = PyDict::new(py);
    stats.set_item("events", out.stats.events)?;
    stats.set_item("packet_hops", out.stats.packet_hops)?;
    stats.set_item("sim_seconds", out.stats.sim_seconds)?;
    stats.set_item("wall_seconds", out.stats.wall_seconds)?;
    stats.set_item("domains", domains)?;
    stats.set_item("threads", threads)?;
    d.set_item("stats", stats)?;
    let tables = PyDict::new(py);
    tables.set_item("flow_series", table_to_dict(py, &out.flow_series)?)?;
    tables.set_item("link_series", table_to_dict(py, &out.link_series)?)?;
    tables.set_item("flows", table_to_dict(py, &out.flows)?)?;
    tables.set_item("links", table_to_dict(py, &out.links)?)?;
    tables.set_item("transactions", table_to_dict(py, &out.transactions)?)?;
    d.set_item("tables", tables)?;
    // The schema's optional tables: `[sessions]` runs with a sample interval, `[pfc]` runs, and
    // runs with a `[workload]` (FCT, slowdown, queue CDF).
    let extra = PyDict::new(py);
    if out.session_samples.rows() > 0 {
        extra.set_item("session_samples", table_to_dict(py, &out.session_samples)?)?;
        extra.set_item("session_rates", table_to_dict(py, &out.session_rates)?)?;
    }
    if out.pfc_ports.rows() > 0 {
        extra.set_item("pfc_ports", table_to_dict(py, &out.pfc_ports)?)?;
    }
    if let Some(dc) = &out.datacenter {
        extra.set_item("fct", table_to_dict(py, &dc.fct)?)?;
        extra.set_item("slowdown", table_to_dict(py, &dc.slowdown)?)?;
        extra.set_item("queue_cdf", table_to_dict(py, &dc.queue_cdf)?)?;
    }
    if !extra.is_empty() {
        d.set_item("session_tables", extra)?;
    }
    if let Some(packets) = &out.capture {
        let list = PyList::empty(py);
        for c in packets {
            list.append((c.time.as_ns(), PyBytes::new(py, &c.bytes), c.orig_len))?;
        }
        d.set_item("pcap", list)?;
    }
    Ok(d.into_any().unbind())
}

/// The max-min fair allocation (exact water-filling): returns {"rate", "bottleneck", "load"};
/// `bottleneck` holds the limiting link's index, -1 for a demand cap, -2 for no constraint.
#[pyfunction]
#[pyo3(signature = (capacity, paths, demand = None))]
fn max_min_fair(
    py: Python<'_>,
    capacity: Vec<f64>,
    paths: Vec<Vec<u32>>,
    demand: Option<Vec<f64>>,
) -> PyResult<PyObject> {
    use xcc_core::analysis::{max_min_fair, Bottleneck, MaxMinProblem};
    let problem = MaxMinProblem { capacity, paths, demand: demand.unwrap_or_default() };
    let a = py.allow_threads(|| max_min_fair(&problem)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("rate", a.rate)?;
    let codes: Vec<i64> = a
        .bottleneck
        .iter()
        .map(|b| match b {
            Bottleneck::Link(l) => *l as i64,
            Bottleneck::Demand => -1,
            Bottleneck::Unconstrained => -2,
        })
        .collect();
    d.set_item("bottleneck", codes)?;
    d.set_item("load", a.load)?;
    Ok(d.into_any().unbind())
}

/// Runs a session experiment of seed 004 on the fluid session driver (JSON, see
/// xcc_sim::fluid::experiment); returns
/// {"stats": {...}, "tables": {"samples", "completions", "finals"}} as dicts of columns.
#[pyfunction]
#[pyo3(signature = (text, source, progress = None))]
fn run_sessions(py: Python<'_>, text: &str, source: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    let mut callback_error: Option<PyErr> = None;
    let mut report = |fraction: f64| {
        if let (Some(cb), None) = (&progress, &callback_error) {
            if let Err(e) = cb.call1(py, (fraction,)) {
                callback_error = Some(e);
            }
        }
    };
    let wall = std::time::Instant::now();
    let result = xcc_sim::fluid::run_experiment(text, source, Some(&mut report));
    let wall = wall.elapsed().as_secs_f64();
    if let Some(e) = callback_error {
        return Err(e);
    }
    let out = result.map_err(PyValueError::new_err)?;
    let d = PyDict::new(py);
    let st = PyDict::new(py);
    let s = &out.stats;
    st.set_item("events", s.events)?;
    st.set_item("control_packets", s.control_packets)?;
    st.set_item("control_hops", s.control_hops)?;
    st.set_item("oracle_runs", s.oracle_runs)?;
    st.set_item("oracle_wall_seconds", s.oracle_wall_s)?;
    st.set_item("links", s.links)?;
    st.set_item("hosts_in_use", s.hosts_in_use)?;
    st.set_item("sessions", s.sessions)?;
    st.set_item("routers", s.routers)?;
    st.set_item("wall_seconds", wall)?;
    d.set_item("stats", st)?;
    let tables = PyDict::new(py);
    let t = &out.samples;
    let samples = PyDict::new(py);
    for (name, v) in [
        ("time_s", &t.time_s),
        ("es_mean", &t.es_mean),
        ("es_p10", &t.es_p10),
        ("es_p90", &t.es_p90),
        ("ee_mean", &t.ee_mean),
        ("ee_p10", &t.ee_p10),
        ("ee_p90", &t.ee_p90),
        ("ee_max", &t.ee_max),
        ("max_queue_bits", &t.max_queue_bits),
        ("max_queue_capacity_bps", &t.max_queue_capacity),
        ("max_queue_delay_s", &t.max_queue_delay_s),
    ] {
        samples.set_item(name, PyList::new(py, v)?)?;
    }
    for (name, v) in [("present", &t.present), ("rated", &t.rated), ("bottlenecks", &t.bottlenecks)] {
        samples.set_item(name, PyList::new(py, v)?)?;
    }
    tables.set_item("samples", samples)?;
    let c = &out.completions;
    let completions = PyDict::new(py);
    completions.set_item("session", PyList::new(py, &c.session)?)?;
    completions.set_item("size_bits", PyList::new(py, &c.size_bits)?)?;
    completions.set_item("start_s", PyList::new(py, &c.start_s)?)?;
    completions.set_item("finish_s", PyList::new(py, &c.finish_s)?)?;
    tables.set_item("completions", completions)?;
    let f = &out.finals;
    let finals = PyDict::new(py);
    finals.set_item("session", PyList::new(py, &f.session)?)?;
    finals.set_item("rate_bps", PyList::new(py, &f.rate_bps)?)?;
    finals.set_item("maxmin_bps", PyList::new(py, &f.maxmin_bps)?)?;
    tables.set_item("finals", finals)?;
    d.set_item("tables", tables)?;
    Ok(d.into_any().unbind())
}

/// A scenario quantity in SI base units (`"5ms"` -> 0.005, `"10Mbps"` -> 1e7, `"30pkt"` ->
/// 30.0), read by the scenario parser's own units code; None if it is not one.
#[pyfunction]
fn quantity_si(text: &str) -> Option<f64> {
    xcc_core::units::si_value(text)
}

/// A scenario time in seconds (`"200ms"` -> 0.2); None if the text is not a time.
#[pyfunction]
fn time_s(text: &str) -> Option<f64> {
    xcc_core::units::parse_duration_ns(text).ok().map(|ns| ns as f64 / 1e9)
}

/// The result tables' columns, declared once in Rust (`xcc_build::schema`): a list of
/// (table, optional, [(name, dtype, unit, doc, nullable)]); an optional table is written only
/// by the runs that measure it.
#[pyfunction]
fn table_schema() -> TableSchema {
    use xcc_sim::schema::{OPTIONAL_TABLES, TABLES};
    let tagged = TABLES.iter().map(|t| (t, false)).chain(OPTIONAL_TABLES.iter().map(|t| (t, true)));
    tagged
        .map(|((t, cols), optional)| {
            (*t, optional, cols.iter().map(|c| (c.name, c.dtype.name(), c.unit, c.doc, c.nullable)).collect())
        })
        .collect()
}

type TableSchema = Vec<(&'static str, bool, Vec<(&'static str, &'static str, &'static str, &'static str, bool)>)>;

/// The names of every algorithm this build runs, by role, from the registries: "link" (a
/// link's `queue`), "host" (a flow's `cc`), "session" (`run_sessions`' protocols).
#[pyfunction]
fn algorithm_names() -> Vec<(&'static str, Vec<&'static str>)> {
    use xcc_sim::scenario::model::{Cc, Protocol, Queue};
    vec![("host", Cc::NAMES.to_vec()), ("link", Queue::NAMES.to_vec()), ("session", Protocol::NAMES.to_vec())]
}

/// What the analysis needs to know of each registered algorithm, from the registries: for
/// "host", `(name, kind tag in run.json, shim bytes with default parameters, None)`; for "link",
/// `(name, kind tag, None, the parameter holding its target utilisation)`.
#[pyfunction]
fn algorithm_kinds() -> Vec<(&'static str, Vec<KindRow>)> {
    use xcc_sim::scenario::model::{Cc, Queue};
    let hosts = Cc::NAMES
        .iter()
        .zip(Cc::TAGS)
        .zip(Cc::default_shim_bytes())
        .map(|((n, t), shim)| (*n, *t, Some(shim), None))
        .collect();
    let links = Queue::NAMES
        .iter()
        .zip(Queue::TAGS)
        .zip(Queue::TARGET_UTILISATION)
        .map(|((n, t), target)| (*n, *t, None, *target))
        .collect();
    vec![("host", hosts), ("link", links)]
}

type KindRow = (&'static str, &'static str, Option<usize>, Option<&'static str>);

/// Names of the session protocols this build can run (`run_sessions`' `protocol`).
#[pyfunction]
fn session_protocols() -> Vec<&'static str> {
    xcc_sim::scenario::model::Protocol::NAMES.to_vec()
}

/// The congestion headers this build encodes, from the wire registry: `(proto, name, len,
/// fields, record_len)` (`record_len` the repeated tail record's length, 0 for a fixed body),
/// each field `(name, label, offset, kind, width, frac_bits, flag, flag_label)` (the
/// last three only for flagged fixed-point words). The Wireshark dissector's table is generated
/// from it (`python -m xcclab.wireshark`).
#[pyfunction]
fn congestion_headers() -> Vec<HeaderRow> {
    use xcc_core::wire::{CongestionHeader, FieldKind};
    CongestionHeader::REGISTRY
        .iter()
        .map(|h| {
            let fields = h
                .fields
                .iter()
                .map(|f| {
                    let (kind, frac, flag, flag_label) = match f.kind {
                        FieldKind::U8 => ("u8", None, None, None),
                        FieldKind::U32 => ("u32", None, None, None),
                        FieldKind::F32 => ("f32", None, None, None),
                        FieldKind::FlaggedFixed24 { frac_bits, flag, flag_label } => {
                            ("flagged_fixed24", Some(frac_bits), Some(flag), Some(flag_label))
                        }
                    };
                    (f.name, f.label, f.offset, kind, f.kind.width(), frac, flag, flag_label)
                })
                .collect();
            (h.proto, h.name, h.len, fields, h.record_len)
        })
        .collect()
}

type FieldRow =
    (&'static str, &'static str, usize, &'static str, usize, Option<u32>, Option<&'static str>, Option<&'static str>);
type HeaderRow = (u8, &'static str, usize, Vec<FieldRow>, usize);

/// The `xcc-emu` command line (`python -m xcclab._router ARGS`), linked into this module so
/// that the wheel carries the router with no separate binary. Runs with the GIL released and
/// returns the exit status; the router installs its own SIGINT/SIGTERM/SIGHUP handlers, so call
/// it only from a process that exists to run it.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emu_main(py: Python<'_>, args: Vec<String>) -> i32 {
    py.allow_threads(|| xcc_emu::run::cli::main(&args))
}

/// Where a Rust panic in this process is logged (message, location, backtrace).
#[pyfunction]
fn panic_log_path() -> String {
    panic_log::panic_log_path().display().to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panic_log::install();
    m.add_function(wrap_pyfunction!(panic_log_path, m)?)?;
    m.add_function(wrap_pyfunction!(max_min_fair, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_sessions, m)?)?;
    m.add_function(wrap_pyfunction!(session_protocols, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(emu_main, m)?)?;
    m.add_function(wrap_pyfunction!(quantity_si, m)?)?;
    m.add_function(wrap_pyfunction!(time_s, m)?)?;
    m.add_function(wrap_pyfunction!(table_schema, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_names, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_headers, m)?)?;
    Ok(())
}
