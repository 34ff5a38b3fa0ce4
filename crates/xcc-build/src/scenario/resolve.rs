//! From the text of a scenario to a resolved [`Scenario`]: parse (TOML or JSON), expand `count`
//! templates, type every entry strictly, convert units, fill defaults, and check every value.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use super::error::typed;
use super::error::ScenarioError;
use super::memory;
use super::model::*;
use super::spec::*;

use xcc_core::transport::DelayedAck;
use xcc_core::units::{parse_amount, parse_bytes, parse_duration_ns, parse_rate_bps, Amount};

/// Text formats a scenario may come in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

/// Parses and resolves a scenario. `source` names it in error messages.
pub fn resolve(text: &str, source: &str, format: Format) -> Result<Scenario, ScenarioError> {
    let err =
        |path: &str, message: String| ScenarioError { source: source.to_string(), path: path.to_string(), message };
    let value: Value = match format {
        Format::Toml => toml::from_str(text)
            .map_err(|e| err(&toml_location(text, &e), format!("not valid TOML: {}", e.message())))?,
        Format::Json => serde_json::from_str(text).map_err(|e| err("", format!("not valid JSON: {e}")))?,
    };
    let top: TopSpec = typed(value, "", source)?;
    Resolver { source, nodes: Vec::new(), by_name: HashMap::new(), expanded_bytes: 0 }.run(top)
}

/// Where a TOML syntax error is: the line and its key (`line 14 (count)`), as the document has
/// no typed field paths yet.
fn toml_location(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else { return String::new() };
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    match line.split_once('=') {
        Some((key, _)) if !key.trim().is_empty() => format!("line {line_no} ({})", key.trim()),
        _ => format!("line {line_no}"),
    }
}

/// Replaces `{i}` in every string of `v`; returns whether any string contained it.
fn substitute(v: &mut Value, i: u64) -> bool {
    match v {
        Value::String(s) if s.contains("{i}") => {
            *s = s.replace("{i}", &i.to_string());
            true
        }
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| substitute(x, i) | acc),
        Value::Object(o) => o.values_mut().fold(false, |acc, x| substitute(x, i) | acc),
        _ => false,
    }
}

pub struct Resolver<'a> {
    pub(crate) source: &'a str,
    nodes: Vec<Node>,
    by_name: HashMap<String, u32>,
    /// Estimated memory the expanded entries need so far (see `memory`).
    expanded_bytes: u64,
}

impl<'a> Resolver<'a> {
    pub(crate) fn err(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError { source: self.source.to_string(), path: path.to_string(), message: message.into() }
    }

    /// Expands an array of entries that may carry `count = N` with `{i}` templates. Refuses,
    /// before allocating, an expansion that would not fit in the machine's available memory.
    fn expand<T: DeserializeOwned>(
        &mut self,
        array: &str,
        entries: Vec<Value>,
    ) -> Result<Vec<(String, T)>, ScenarioError> {
        let mut out = Vec::new();
        for (k, mut entry) in entries.into_iter().enumerate() {
            let base = format!("{array}[{k}]");
            let count = match entry.as_object_mut().and_then(|o| o.remove("count")) {
                None => None,
                Some(Value::Number(n)) if n.as_u64().is_some_and(|c| c >= 1) => n.as_u64(),
                Some(other) => {
                    return Err(
                        self.err(&format!("{base}.count"), format!("expected a whole number >= 1, found {other}"))
                    )
                }
            };
            let per_copy = memory::per_entry_bytes::<T>(&entry);
            let copies = count.unwrap_or(1);
            self.expanded_bytes = self.expanded_bytes.saturating_add(per_copy.saturating_mul(copies));
            if let Err(m) = memory::check(self.expanded_bytes, per_copy, copies) {
                return Err(self.err(&format!("{base}.count"), m));
            }
            match count {
                None => out.push((base.clone(), typed(entry, &base, self.source)?)),
                Some(n) if n > u32::MAX as u64 => {
                    return Err(self.err(&format!("{base}.count"), format!("{n}: expected at most {}", u32::MAX)))
                }
                Some(n) => {
                    for i in 1..=n {
                        let mut e = entry.clone();
                        if !substitute(&mut e, i) {
                            return Err(self.err(
                                &base,
                                format!("count = {n} but no field uses \"{{i}}\", so every copy would be identical"),
                            ));
                        }
                        let path = format!("{base} (i={i})");
                        out.push((path.clone(), typed(e, &path, self.source)?));
                    }
                }
            }
        }
        Ok(out)
    }

    fn add_node(&mut self, path: &str, name: String, kind: NodeKind) -> Result<(), ScenarioError> {
        if name.is_empty() || name.contains("->") || name.contains(char::is_whitespace) {
            return Err(self.err(
                &format!("{path}.name"),
                format!("'{name}' is not a usable node name (non-empty, no spaces, no '->')"),
            ));
        }
        if self.by_name.contains_key(&name) {
            return Err(self.err(&format!("{path}.name"), format!("node name '{name}' is used twice")));
        }
        self.by_name.insert(name.clone(), self.nodes.len() as u32);
        self.nodes.push(Node { name, kind });
        Ok(())
    }

    fn node(&self, path: &str, name: &str) -> Result<u32, ScenarioError> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| self.err(path, format!("unknown node '{name}' (declare it under [[host]] or [[router]])")))
    }

    fn host(&self, path: &str, name: &str) -> Result<u32, ScenarioError> {
        let id = self.node(path, name)?;
        if self.nodes[id as usize].kind != NodeKind::Host {
            return Err(self.err(path, format!("'{name}' is a router; traffic starts and ends at hosts")));
        }
        Ok(id)
    }

    pub(crate) fn time(&self, path: &str, s: &str) -> Result<u64, ScenarioError> {
        parse_duration_ns(s).map_err(|m| self.err(path, m))
    }

    fn run(mut self, top: TopSpec) -> Result<Scenario, ScenarioError> {
        let duration_ns = self.time("duration", &top.duration)?;
        if duration_ns == 0 {
            return Err(self.err("duration", "expected a positive time"));
        }
        if top.name.trim().is_empty() {
            return Err(self.err("name", "expected a non-empty name"));
        }
        for (path, n) in self.expand::<NodeSpec>("host", top.host)? {
            self.add_node(&path, n.name, NodeKind::Host)?;
        }
        for (path, n) in self.expand::<NodeSpec>("router", top.router)? {
            self.add_node(&path, n.name, NodeKind::Router)?;
        }
        let mut links = Vec::new();
        for (path, l) in self.expand::<LinkSpec>("link", top.link)? {
            self.link(&path, l, &mut links)?;
        }
        let mut flows = Vec::new();
        for (path, f) in self.expand::<FlowSpec>("flow", top.flow)? {
            flows.push(self.flow(&path, f, duration_ns)?);
        }
        self.same_session_params(&flows)?;
        let mut arrivals = Vec::new();
        for (path, a) in self.expand::<ArrivalsSpec>("arrivals", top.arrivals)? {
            arrivals.push(self.arrivals(&path, a, duration_ns)?);
        }
        let mut transactions = Vec::new();
        for (k, t) in top.transactions.into_iter().enumerate() {
            let path = format!("transactions[{k}]");
            let spec: TransactionsSpec = typed(t, &path, self.source)?;
            // Each transaction becomes a request and a response flow in the driver.
            let per_txn = 2 * memory::per_entry_bytes::<Flow>(&Value::Null);
            self.expanded_bytes = self.expanded_bytes.saturating_add(per_txn.saturating_mul(spec.count as u64));
            if let Err(m) = memory::check(self.expanded_bytes, per_txn, spec.count as u64) {
                return Err(self.err(&format!("{path}.count"), m));
            }
            transactions.push(self.transactions(&path, spec, duration_ns)?);
        }
        let interval_ns = match top.metrics.and_then(|m| m.interval) {
            Some(s) => self.time("metrics.interval", &s)?,
            None => 100_000_000,
        };
        let declared = [
            ("host", self.nodes.iter().any(|n| n.kind == NodeKind::Host)),
            ("router", self.nodes.iter().any(|n| n.kind == NodeKind::Router)),
            ("link", !links.is_empty()),
            ("flow", !flows.is_empty()),
            ("arrivals", !arrivals.is_empty()),
            ("transactions", !transactions.is_empty()),
        ];
        if let (Some(_), Some(_)) = (&top.pfc, &top.sessions) {
            return Err(self.err("pfc", "PFC runs on declared links; a [sessions] network has none"));
        }
        let pfc = match top.pfc {
            None => None,
            Some(spec) => Some(crate::pfc::resolve(self.source, spec, &self.nodes, &links, &flows)?),
        };
        let sessions = match top.sessions {
            None => None,
            Some(spec) => {
                if let Some((what, _)) = declared.iter().find(|(_, present)| *present) {
                    return Err(self.err(
                        what,
                        "a scenario with [sessions] generates its whole network and traffic; \
                         declare no [[host]], [[router]], [[link]], [[flow]], [[arrivals]] or [[transactions]]",
                    ));
                }
                Some(self.sessions(spec, duration_ns)?)
            }
        };
        Ok(Scenario {
            name: top.name,
            description: top.description,
            duration_ns,
            seed: top.seed.unwrap_or(1),
            nodes: self.nodes,
            links,
            flows,
            arrivals,
            transactions,
            metrics: Metrics { interval_ns },
            sessions,
            pfc,
        })
    }

    /// `[sessions]`: the protocol and sizes typed here; `topology` and `workload` are typed by
    /// the simulation that generates them (its errors name `sessions.topology`, `sessions.workload`).
    fn sessions(&self, spec: SessionsSpec, duration_ns: u64) -> Result<SessionWorkload, ScenarioError> {
        let path = "sessions";
        let protocol = Protocol::resolve(self.source, "sessions.protocol", spec.protocol)?;
        let packet_bytes = self.packet_size(path, &spec.packet_size, 2000)?;
        let sample_interval_ns = match &spec.sample_interval {
            None => 0,
            Some(s) => match self.time("sessions.sample_interval", s)? {
                0 => return Err(self.err("sessions.sample_interval", "expected a positive time (omit it for none)")),
                ns => ns,
            },
        };
        let rate_window_ns =
            self.positive_time_or("sessions.rate_window", &spec.rate_window, sample_interval_ns.max(1))?;
        if sample_interval_ns > 0 && rate_window_ns > sample_interval_ns.min(duration_ns) {
            return Err(self.err(
                "sessions.rate_window",
                "expected at most the sample interval (each sample measures the window before it)",
            ));
        }
        Ok(SessionWorkload {
            protocol,
            packet_bytes,
            topology: spec.topology,
            topology_seed: spec.topology_seed,
            workload: spec.workload,
            sample_interval_ns,
            rate_window_ns,
        })
    }

    fn link(&self, path: &str, l: LinkSpec, links: &mut Vec<Link>) -> Result<(), ScenarioError> {
        let a = self.node(&format!("{path}.between[0]"), &l.between[0])?;
        let b = self.node(&format!("{path}.between[1]"), &l.between[1])?;
        if a == b {
            return Err(self.err(&format!("{path}.between"), "a link joins two different nodes"));
        }
        let rev = l.reverse.unwrap_or_default();
        let fwd =
            self.direction(path, a, b, &l.rate, &l.delay, &l.buffer, l.queue.as_ref(), l.loss, l.jitter.as_deref())?;
        let rpath = format!("{path}.reverse");
        let back = self.direction(
            &rpath,
            b,
            a,
            rev.rate.as_ref().unwrap_or(&l.rate),
            rev.delay.as_ref().unwrap_or(&l.delay),
            rev.buffer.as_ref().unwrap_or(&l.buffer),
            rev.queue.as_ref().or(l.queue.as_ref()),
            rev.loss.or(l.loss),
            rev.jitter.as_deref().or(l.jitter.as_deref()),
        )?;
        links.push(fwd);
        links.push(back);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn direction(
        &self,
        path: &str,
        from: u32,
        to: u32,
        rate: &str,
        delay: &str,
        buffer: &str,
        queue: Option<&Value>,
        loss: Option<f64>,
        jitter: Option<&str>,
    ) -> Result<Link, ScenarioError> {
        let rate_bps = parse_rate_bps(rate).map_err(|m| self.err(&format!("{path}.rate"), m))?;
        if rate_bps == 0 {
            return Err(self.err(&format!("{path}.rate"), "expected a positive rate"));
        }
        let delay_ns = self.time(&format!("{path}.delay"), delay)?;
        let buffer = match parse_amount(buffer, true).map_err(|m| self.err(&format!("{path}.buffer"), m))? {
            Amount::Unlimited => Buffer { packets: None, bytes: None },
            Amount::Packets(p) if p >= 1.0 && p.fract() == 0.0 => Buffer { packets: Some(p as u64), bytes: None },
            Amount::Bytes(b) if b >= 1.0 => Buffer { packets: None, bytes: Some(b as u64) },
            _ => {
                return Err(self.err(
                    &format!("{path}.buffer"),
                    format!("'{buffer}': expected at least one whole packet or one byte"),
                ))
            }
        };
        let queue = self.queue(&format!("{path}.queue"), queue)?;
        let loss = loss.unwrap_or(0.0);
        if !(0.0..1.0).contains(&loss) {
            return Err(self.err(&format!("{path}.loss"), format!("{loss}: expected a probability in [0, 1)")));
        }
        let name = format!("{}->{}", self.nodes[from as usize].name, self.nodes[to as usize].name);
        let jitter_ns = match jitter {
            None => 0,
            Some(s) => match self.time(&format!("{path}.jitter"), s)? {
                j if j > 1_000_000_000 => {
                    return Err(self.err(&format!("{path}.jitter"), format!("'{s}': expected at most 1 s")))
                }
                j => j,
            },
        };
        Ok(Link { name, from, to, rate_bps, delay_ns, buffer, queue, loss, jitter_ns })
    }

    fn queue(&self, path: &str, q: Option<&Value>) -> Result<Queue, ScenarioError> {
        let kind_of = |v: &Value| -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o.get("kind").and_then(|k| k.as_str()).map(str::to_string),
                _ => None,
            }
        };
        let Some(q) = q else {
            return Ok(Queue::DropTail(DropTailParams {}));
        };
        let kind =
            kind_of(q).ok_or_else(|| self.err(path, "expected \"droptail\", \"red\" or a table with kind = ..."))?;
        // A bare name (`queue = "xcp"`) asks for the defaults; a table gives parameters.
        let table = if q.is_string() { None } else { Some(q) };
        Queue::resolve(&kind, self.source, path, table).unwrap_or_else(|| {
            Err(self
                .err(&format!("{path}.kind"), format!("unknown queue '{kind}' (known: {})", Queue::NAMES.join(", "))))
        })
    }

    /// A positive time at `path`, or `default_ns`.
    pub(crate) fn positive_time_or(
        &self,
        path: &str,
        v: &Option<String>,
        default_ns: u64,
    ) -> Result<u64, ScenarioError> {
        match v {
            None => Ok(default_ns),
            Some(s) => match self.time(path, s)? {
                0 => Err(self.err(path, "expected a positive time")),
                ns => Ok(ns),
            },
        }
    }

    fn transport(&self, path: &str, t: Option<TransportSpec>) -> Result<Transport, ScenarioError> {
        let t = t.unwrap_or_default();
        let size = |field: &str, v: &Option<String>, default: u32| -> Result<u32, ScenarioError> {
            match v {
                None => Ok(default),
                Some(s) => {
                    let b = parse_bytes(s).map_err(|m| self.err(&format!("{path}.{field}"), m))?;
                    if b == 0 || b > 65_000 {
                        return Err(self.err(&format!("{path}.{field}"), format!("'{s}': expected 1 B to 65000 B")));
                    }
                    Ok(b as u32)
                }
            }
        };
        let mss_bytes = size("mss", &t.mss, 1460)?;
        let header_bytes = match &t.header {
            Some(s) if parse_bytes(s).ok() == Some(0) => 0,
            _ => size("header", &t.header, 40)?,
        };
        let linux_ack = t.delayed_ack.as_ref().and_then(Value::as_str) == Some("linux");
        let delayed_ack_ns = match &t.delayed_ack {
            None | Some(Value::Bool(false)) => None,
            Some(_) if linux_ack => Some(DelayedAck::LINUX.max_delay.as_ns()),
            Some(Value::String(s)) => match self.time(&format!("{path}.delayed_ack"), s)? {
                0 => return Err(self.err(&format!("{path}.delayed_ack"), "expected a positive time, or false")),
                d => Some(d),
            },
            Some(other) => {
                return Err(self.err(
                    &format!("{path}.delayed_ack"),
                    format!("expected a time like \"40ms\", \"linux\" or false, found {other}"),
                ))
            }
        };
        let min_rto_ns = match &t.min_rto {
            None => 200_000_000,
            Some(s) => self.time(&format!("{path}.min_rto"), s)?,
        };
        let initial_rto_ns = match &t.initial_rto {
            None => 1_000_000_000,
            Some(s) => self.time(&format!("{path}.initial_rto"), s)?,
        };
        if min_rto_ns == 0 || initial_rto_ns == 0 {
            return Err(self.err(&format!("{path}.min_rto"), "retransmission timeouts must be positive"));
        }
        let linux_rto = match t.rto.as_deref() {
            None | Some("rfc6298") => false,
            Some("linux") => true,
            Some(other) => {
                return Err(self.err(
                    &format!("{path}.rto"),
                    format!("'{other}': expected \"rfc6298\" (RFC 6298's timer) or \"linux\" (SRTT + max(200 ms, 4 mdev), as Linux)"),
                ))
            }
        };
        let handshake = match t.connection.as_deref() {
            None | Some("handshake") => true,
            Some("open") => false,
            Some(other) => {
                return Err(self.err(
                    &format!("{path}.connection"),
                    format!("'{other}': expected \"handshake\" (SYN / SYN-ACK first) or \"open\" (already open)"),
                ))
            }
        };
        Ok(Transport {
            mss_bytes,
            header_bytes,
            ecn: t.ecn.unwrap_or(false),
            sack: t.sack.unwrap_or(true),
            delayed_ack_ns,
            min_rto_ns,
            initial_rto_ns,
            pace: t.pace.unwrap_or(false),
            linux_rto,
            quick_acks: if linux_ack { DelayedAck::LINUX.quick_acks } else { 0 },
            handshake,
        })
    }

    fn cc(&self, path: &str, v: Option<Value>) -> Result<Cc, ScenarioError> {
        let (kind, table) = match &v {
            None => ("newreno".to_string(), None),
            Some(Value::String(s)) => (s.clone(), None),
            Some(t @ Value::Object(o)) => match o.get("kind").and_then(|k| k.as_str()) {
                Some(k) => (k.to_string(), Some(t)),
                // No usable kind: let the typed table name what is wrong with it.
                None => {
                    return Err(typed::<CcKindSpec>(t.clone(), path, self.source).err().unwrap_or_else(|| {
                        self.err(&format!("{path}.kind"), "expected the name of a congestion control")
                    }))
                }
            },
            Some(other) => {
                return Err(self.err(path, format!("expected \"newreno\" or a table with kind = ..., found {other}")))
            }
        };
        // "reno" is accepted as another name of newreno.
        let name = if kind == "reno" { "newreno" } else { kind.as_str() };
        Cc::resolve(name, self.source, path, table).unwrap_or_else(|| {
            Err(self.err(path, format!("unknown congestion control '{kind}' (known: {})", Cc::NAMES.join(", "))))
        })
    }

    fn window(
        &self,
        path: &str,
        start: &Option<String>,
        stop: &Option<String>,
        duration_ns: u64,
    ) -> Result<(u64, Option<u64>), ScenarioError> {
        let start_ns = match start {
            None => 0,
            Some(s) => self.time(&format!("{path}.start"), s)?,
        };
        if start_ns >= duration_ns {
            return Err(self.err(&format!("{path}.start"), "starts at or after the end of the scenario (duration)"));
        }
        let stop_ns = match stop {
            None => None,
            Some(s) => Some(self.time(&format!("{path}.stop"), s)?),
        };
        if let Some(stop) = stop_ns {
            if stop <= start_ns {
                return Err(self.err(&format!("{path}.stop"), "expected stop later than start"));
            }
        }
        Ok((start_ns, stop_ns))
    }

    fn endpoints(&self, path: &str, src: &str, dst: &str, names: (&str, &str)) -> Result<(u32, u32), ScenarioError> {
        let s = self.host(&format!("{path}.{}", names.0), src)?;
        let d = self.host(&format!("{path}.{}", names.1), dst)?;
        if s == d {
            return Err(self.err(
                &format!("{path}.{}", names.1),
                format!("'{dst}' is also the source; a flow needs two different hosts"),
            ));
        }
        Ok((s, d))
    }

    fn flow(&self, path: &str, f: FlowSpec, duration_ns: u64) -> Result<Flow, ScenarioError> {
        let (src, dst) = self.endpoints(path, &f.src, &f.dst, ("src", "dst"))?;
        let (start_ns, stop_ns) = self.window(path, &f.start, &f.stop, duration_ns)?;
        let route = match &f.route {
            None => None,
            Some(names) => {
                let ids = names
                    .iter()
                    .enumerate()
                    .map(|(k, n)| self.node(&format!("{path}.route[{k}]"), n))
                    .collect::<Result<Vec<_>, _>>()?;
                if ids.first() != Some(&src) || ids.last() != Some(&dst) {
                    return Err(
                        self.err(&format!("{path}.route"), "a route starts at the flow's src and ends at its dst")
                    );
                }
                Some(ids)
            }
        };
        let kind = match f.kind.as_deref().unwrap_or("bulk") {
            "bulk" => {
                for (field, v) in [("rate", &f.rate), ("packet_size", &f.packet_size)] {
                    if v.is_some() {
                        return Err(self.err(&format!("{path}.{field}"), "only cbr and session flows take this field"));
                    }
                }
                for (field, present) in [("protocol", f.protocol.is_some()), ("demand", f.demand.is_some())] {
                    if present {
                        return Err(self.err(&format!("{path}.{field}"), "only session flows take this field"));
                    }
                }
                FlowKind::Bulk {
                    size_bytes: self.flow_size(path, &f.size)?,
                    cc: self.cc(&format!("{path}.cc"), f.cc)?,
                    transport: self.transport(&format!("{path}.transport"), f.transport)?,
                }
            }
            "cbr" => {
                for (field, present) in [
                    ("size", f.size.is_some()),
                    ("cc", f.cc.is_some()),
                    ("transport", f.transport.is_some()),
                    ("protocol", f.protocol.is_some()),
                    ("demand", f.demand.is_some()),
                ] {
                    if present {
                        return Err(self.err(&format!("{path}.{field}"), "cbr flows take rate and packet_size only"));
                    }
                }
                let rate = f
                    .rate
                    .as_ref()
                    .ok_or_else(|| self.err(&format!("{path}.rate"), "a cbr flow needs a rate like \"400Mbps\""))?;
                let rate_bps = parse_rate_bps(rate).map_err(|m| self.err(&format!("{path}.rate"), m))?;
                if rate_bps == 0 {
                    return Err(self.err(&format!("{path}.rate"), "expected a positive rate"));
                }
                let packet_bytes = self.packet_size(path, &f.packet_size, 1500)?;
                FlowKind::Cbr { rate_bps, packet_bytes }
            }
            "session" => {
                for (field, present) in
                    [("cc", f.cc.is_some()), ("transport", f.transport.is_some()), ("rate", f.rate.is_some())]
                {
                    if present {
                        return Err(self.err(
                            &format!("{path}.{field}"),
                            "session flows take protocol, demand, size and packet_size (the protocol sets the rate)",
                        ));
                    }
                }
                let demand_bps = match &f.demand {
                    None => None,
                    Some(d) => match parse_rate_bps(d).map_err(|m| self.err(&format!("{path}.demand"), m))? {
                        0 => {
                            return Err(self.err(
                                &format!("{path}.demand"),
                                "expected a positive rate (omit it for a greedy session)",
                            ))
                        }
                        b => Some(b),
                    },
                };
                FlowKind::Session {
                    protocol: Protocol::resolve(self.source, &format!("{path}.protocol"), f.protocol)?,
                    size_bytes: self.flow_size(path, &f.size)?,
                    demand_bps,
                    // Seed 004, Exp. 1b: packets of 2000 bytes.
                    packet_bytes: self.packet_size(path, &f.packet_size, 2000)?,
                }
            }
            other => {
                return Err(self
                    .err(&format!("{path}.kind"), format!("unknown flow kind '{other}' (known: bulk, cbr, session)")))
            }
        };
        Ok(Flow { origin: path.to_string(), name: f.name, src, dst, start_ns, stop_ns, route, kind })
    }

    /// A flow's `size`: positive, or `None` when omitted (an unlimited flow).
    fn flow_size(&self, path: &str, size: &Option<String>) -> Result<Option<u64>, ScenarioError> {
        match size {
            None => Ok(None),
            Some(s) => match parse_bytes(s).map_err(|m| self.err(&format!("{path}.size"), m))? {
                0 => Err(self.err(&format!("{path}.size"), "expected a positive size (omit it for an unlimited flow)")),
                b => Ok(Some(b)),
            },
        }
    }

    /// A flow's `packet_size`, 1 B to 65000 B, or `default`.
    fn packet_size(&self, path: &str, v: &Option<String>, default: u32) -> Result<u32, ScenarioError> {
        match v {
            None => Ok(default),
            Some(s) => match parse_bytes(s).map_err(|m| self.err(&format!("{path}.packet_size"), m))? {
                b @ 1..=65_000 => Ok(b as u32),
                _ => Err(self.err(&format!("{path}.packet_size"), "expected 1 B to 65000 B")),
            },
        }
    }

    /// Sessions of one protocol share its link tasks, so they must share its parameters.
    fn same_session_params(&self, flows: &[Flow]) -> Result<(), ScenarioError> {
        let mut first: Vec<(&Protocol, &str)> = Vec::new();
        for f in flows {
            let FlowKind::Session { protocol, .. } = &f.kind else { continue };
            match first.iter().find(|(p, _)| p.name() == protocol.name()) {
                None => first.push((protocol, &f.origin)),
                Some((p, origin)) if *p != protocol => {
                    return Err(self.err(
                        &format!("{}.protocol", f.origin),
                        format!(
                            "{} sessions share the links' {} state, so they must all have the same parameters; \
                             these differ from {origin}'s",
                            protocol.name(),
                            protocol.name()
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn size_dist(&self, path: &str, s: SizeDistSpec) -> Result<SizeDist, ScenarioError> {
        let mean = |s: &SizeDistSpec| -> Result<f64, ScenarioError> {
            let m = s
                .mean
                .as_ref()
                .ok_or_else(|| self.err(&format!("{path}.mean"), "this distribution needs a mean size"))?;
            match parse_bytes(m).map_err(|e| self.err(&format!("{path}.mean"), e))? {
                0 => Err(self.err(&format!("{path}.mean"), "expected a positive size")),
                b => Ok(b as f64),
            }
        };
        match s.dist.as_str() {
            "fixed" => {
                let v = s
                    .value
                    .as_ref()
                    .ok_or_else(|| self.err(&format!("{path}.value"), "a fixed size needs value = \"4KB\""))?;
                match parse_bytes(v).map_err(|e| self.err(&format!("{path}.value"), e))? {
                    0 => Err(self.err(&format!("{path}.value"), "expected a positive size")),
                    bytes => Ok(SizeDist::Fixed { bytes }),
                }
            }
            "exponential" => Ok(SizeDist::Exponential { mean_bytes: mean(&s)? }),
            "pareto" => {
                let shape = s.shape.ok_or_else(|| {
                    self.err(&format!("{path}.shape"), "a Pareto size needs shape (> 1 for a finite mean)")
                })?;
                if shape <= 1.0 {
                    return Err(self.err(
                        &format!("{path}.shape"),
                        format!("{shape}: expected shape > 1 (the mean is infinite otherwise)"),
                    ));
                }
                Ok(SizeDist::Pareto { mean_bytes: mean(&s)?, shape })
            }
            other => Err(self.err(
                &format!("{path}.dist"),
                format!("unknown distribution '{other}' (known: fixed, exponential, pareto)"),
            )),
        }
    }

    fn arrivals(&self, path: &str, a: ArrivalsSpec, duration_ns: u64) -> Result<Arrivals, ScenarioError> {
        let (src, dst) = self.endpoints(path, &a.src, &a.dst, ("src", "dst"))?;
        let (start_ns, stop_ns) = self.window(path, &a.start, &a.stop, duration_ns)?;
        let mean_interarrival_ns = self.time(&format!("{path}.mean_interarrival"), &a.mean_interarrival)?;
        if mean_interarrival_ns == 0 {
            return Err(self.err(&format!("{path}.mean_interarrival"), "expected a positive time"));
        }
        Ok(Arrivals {
            origin: path.to_string(),
            name: a.name,
            src,
            dst,
            start_ns,
            stop_ns: stop_ns.unwrap_or(duration_ns),
            mean_interarrival_ns,
            size: self.size_dist(&format!("{path}.size"), a.size)?,
            cc: self.cc(&format!("{path}.cc"), a.cc)?,
            transport: self.transport(&format!("{path}.transport"), a.transport)?,
        })
    }

    fn transactions(&self, path: &str, t: TransactionsSpec, duration_ns: u64) -> Result<Transactions, ScenarioError> {
        let (client, server) = self.endpoints(path, &t.client, &t.server, ("client", "server"))?;
        let (start_ns, stop_ns) = self.window(path, &t.start, &t.stop, duration_ns)?;
        if t.count == 0 {
            return Err(self.err(&format!("{path}.count"), "expected at least one transaction"));
        }
        let bytes = |field: &str, s: &str| -> Result<u64, ScenarioError> {
            match parse_bytes(s).map_err(|m| self.err(&format!("{path}.{field}"), m))? {
                0 => Err(self.err(&format!("{path}.{field}"), "expected a positive size")),
                b => Ok(b),
            }
        };
        Ok(Transactions {
            origin: path.to_string(),
            name: t.name,
            client,
            server,
            count: t.count,
            start_ns,
            stop_ns: stop_ns.unwrap_or(duration_ns),
            request_bytes: bytes("request", &t.request)?,
            response_bytes: bytes("response", &t.response)?,
            cc: self.cc(&format!("{path}.cc"), t.cc)?,
            transport: self.transport(&format!("{path}.transport"), t.transport)?,
            persistent: t.persistent.unwrap_or(false),
        })
    }
}
