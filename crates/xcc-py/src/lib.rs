//! `xcclab._native`: the thin PyO3 layer over the simulator. Scenarios come in as text (TOML
//! from files, JSON from the Python builder); results go out as plain dicts of columns, which
//! the Python side turns into polars DataFrames and Parquet files.

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
    // Routes are checked when the simulation is built.
    xcc_sim::Simulation::new(s.clone(), false).map_err(|mut e| {
        e.source = source.to_string();
        PyValueError::new_err(e.to_string())
    })?;
    serde_json::to_string(&s).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Runs a scenario; returns {"resolved", "seed", "stats", "tables"}, and with
/// `pcap_link="a->b"` also "pcap": the packets departing that link direction as a list of
/// (time_ns, header bytes, original length) (see xcc_sim::capture for the encoding).
#[pyfunction]
#[pyo3(signature = (text, source, format = "toml", seed = None, metrics = true, progress = None, pcap_link = None))]
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
) -> PyResult<PyObject> {
    let fmt = format_of(format)?;
    let mut callback_error: Option<PyErr> = None;
    let mut report = |fraction: f64| {
        if let (Some(cb), None) = (&progress, &callback_error) {
            if let Err(e) = cb.call1(py, (fraction,)) {
                callback_error = Some(e);
            }
        }
    };
    let result = xcc_sim::run_text_capturing(text, source, fmt, seed, metrics, pcap_link, Some(&mut report));
    if let Some(e) = callback_error {
        return Err(e);
    }
    let (scenario, out) = result.map_err(|e| match e {
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
    d.set_item("stats", stats)?;
    let tables = PyDict::new(py);
    tables.set_item("flow_series", table_to_dict(py, &out.flow_series)?)?;
    tables.set_item("link_series", table_to_dict(py, &out.link_series)?)?;
    tables.set_item("flows", table_to_dict(py, &out.flows)?)?;
    tables.set_item("links", table_to_dict(py, &out.links)?)?;
    tables.set_item("transactions", table_to_dict(py, &out.transactions)?)?;
    d.set_item("tables", tables)?;
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(max_min_fair, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
