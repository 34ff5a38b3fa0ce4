"""Run scenarios and handle their results.

:func:`run` hands a scenario to the simulator (:mod:`xcclab._native`) and returns a
:class:`RunResult` whose tables are polars DataFrames. With ``out=DIR`` it also writes the run
directory (layout in ``docs/output-schema.md``)::

    DIR/run.json              scenario (resolved), seed, versions, event counts: deterministic
    DIR/timing.json           wall time and host: the only non-deterministic file
    DIR/flows.parquet         one row per flow
    DIR/links.parquet         one row per link direction
    DIR/flow_series.parquet   per-flow time series
    DIR/link_series.parquet   per-link time series
    DIR/transactions.parquet  one row per request/response exchange
    DIR/session_samples.parquet, DIR/session_rates.parquet
                              [sessions] runs with a sample_interval only: seed 004's error
                              metrics per sample, and the last sample's per-session rates

The directory is written atomically (see :mod:`xcclab._fsutil`): a failed run leaves nothing,
and an existing directory is replaced only after success. The same scenario and seed give
byte-identical ``run.json`` and Parquet files.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ._fsutil import atomic_dir
from ._version import __version__
from .errors import ScenarioError, load_native
from .scenario import Scenario, _toml_loads, read_scenario_text
from .schema import OPTIONAL_TABLE_NAMES, TABLE_NAMES, to_frame

ScenarioLike = Union[str, os.PathLike, Scenario, dict, "ScenarioInput"]
Progress = Union[Callable[[float], None], bool, None]

RUN_FORMAT = "xcclab-run/1"
PCAP_FILE = "capture.pcap"


#: A flow whose rate over the second half of a run is below this fraction of its max-min share
#: is called starved in the run's summary (:meth:`RunResult.warnings`).
STARVED_SHARE = 0.1
#: Warnings the summary prints; the rest are counted.
MAX_SUMMARY_WARNINGS = 5
#: The transport's window cap (``MAX_WINDOW_BYTES``, ``MAX_WINDOW_SEGMENTS`` in
#: ``crates/xcc-core/src/transport/sender.rs``): TCP's largest window (RFC 7323), and at most
#: 2^20 segments for a tiny MSS.
WINDOW_CAP_BYTES = 1 << 30
WINDOW_CAP_SEGMENTS = 1 << 20


def window_cap_packets(mss_bytes: int) -> int:
    """The window cap in full-sized packets for this MSS (``window_cap_segments`` in Rust)."""
    return min(WINDOW_CAP_BYTES // max(mss_bytes, 1), WINDOW_CAP_SEGMENTS)


@dataclass
class ScenarioInput:
    """The three arguments the native module takes for a scenario."""

    text: str
    source: str
    format: str  # "toml" | "json"


def scenario_input(scenario: ScenarioLike) -> ScenarioInput:
    """Turn any accepted scenario form into (text, source name, format).

    - :class:`Scenario` or ``dict``: JSON, source ``<scenario NAME>``;
    - a path (``str`` or ``PathLike``): the file's text, TOML unless the suffix is ``.json``;
    - a ``str`` containing a newline: TOML text itself, source ``<string>``;
    - a :class:`ScenarioInput`: as is (the sweep runner names its points' sources this way).
    """
    if isinstance(scenario, ScenarioInput):
        return scenario
    if isinstance(scenario, Scenario):
        return ScenarioInput(scenario.to_json(), f"<scenario {scenario.name}>", "json")
    if isinstance(scenario, dict):
        name = scenario.get("name", "?")
        return ScenarioInput(json.dumps(scenario), f"<scenario {name}>", "json")
    if isinstance(scenario, str) and "\n" in scenario:
        return ScenarioInput(scenario, "<string>", "toml")
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        fmt = "json" if path.suffix.lower() == ".json" else "toml"
        return ScenarioInput(read_scenario_text(path), str(scenario), fmt)
    raise TypeError(
        f"scenario must be a path, TOML text, a Scenario or a dict, not {type(scenario).__name__}"
    )


def validate(scenario: ScenarioLike) -> dict[str, Any]:
    """Check a scenario; return the resolved (expanded, defaulted) scenario as a dict.

    Raises ``ValueError`` naming the file, the field and what was expected.
    """
    inp = scenario_input(scenario)
    native = load_native()
    return json.loads(native.validate(inp.text, inp.source, inp.format))


def without_series(inp: ScenarioInput) -> ScenarioInput:
    """The same scenario with ``[metrics] interval = "0s"`` (no time-series tables).

    The original text is validated first so errors still point at the user's file.
    """
    load_native().validate(inp.text, inp.source, inp.format)
    data = json.loads(inp.text) if inp.format == "json" else _toml_loads(inp.text)
    data.setdefault("metrics", {})["interval"] = "0s"
    return ScenarioInput(json.dumps(data), inp.source, "json")


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Progress = None,
    *,
    series: bool = True,
    pcap: str | None = None,
    stages: Any = None,
    threads: int = 1,
) -> RunResult:
    """Simulate ``scenario`` and return its results (also written to ``out`` if given).

    ``seed`` overrides the scenario's seed. ``progress`` is a callable receiving the simulated
    fraction done (0..1), or ``True`` for a progress bar on stderr (shown only for runs longer
    than about two seconds). ``series=False`` skips the time-series tables. ``pcap="a->b"``
    captures the packets departing that link direction (``RunResult.pcap``; written to
    ``OUT/capture.pcap``, see ``docs/pcap.md``). ``threads``: threads of the parallel engine
    (the same results for any number; ``timing["domains"]`` says how many parts the network
    was cut into, 1 for the serial engine). ``stages``: a
    :class:`xcclab._progress.Stages` reporting each stage (simulation, tables and references,
    writing) with its time; None reports nothing.
    """
    from ._progress import Stages

    stages = stages if stages is not None else Stages(enabled=False)
    inp = scenario_input(scenario)
    if not series:
        inp = without_series(inp)
    native = load_native()
    bar = None
    callback: Callable[[float], None] | None
    if progress is True:
        from ._progress import ProgressBar

        bar = ProgressBar(desc=Path(inp.source).stem if inp.source[0] != "<" else "run")
        callback = bar
    else:
        callback = progress or None
    try:
        extra: dict[str, Any] = {"pcap_link": pcap} if pcap is not None else {}
        if threads != 1:
            extra["threads"] = threads
        with stages.stage("simulate"):
            raw = native.run(
                inp.text, inp.source, inp.format, seed=seed, progress=callback, **extra
            )
    finally:
        if bar is not None:
            bar.close()
    with stages.stage("tables and max-min references"):
        result = RunResult.from_native(raw, native_version=native.version(), source=inp.source)
    if pcap is not None:
        result.pcap = list(raw.get("pcap", []))
        result.pcap_link = pcap
    if out is not None:
        with stages.stage(f"write {out}"):
            result.save(out)
    return result


#: Seed 004's error metrics of a ``[sessions]`` run with a ``sample_interval``
#: (docs/scenario-format.md): the schema's optional tables, present, and written, only for
#: such runs.
SESSION_TABLES = OPTIONAL_TABLE_NAMES


def _session_frames(raw: dict[str, Any]) -> dict[str, Any]:
    """The session metric tables of a native result, if it has them, typed by the schema."""
    extra = raw.get("session_tables")
    if not extra:
        return {}
    return {name: to_frame(name, extra[name]) for name in SESSION_TABLES if name in extra}


@dataclass
class RunResult:
    """The outcome of one simulation: ``run_info`` (run.json), ``timing`` and five tables."""

    run_info: dict[str, Any]
    timing: dict[str, Any]
    tables: dict[str, Any]  # name -> polars.DataFrame
    path: Path | None = field(default=None, compare=False)
    #: Captured packets (time_ns, header bytes, original length) when run with ``pcap=LINK``.
    pcap: list[Any] | None = field(default=None, compare=False)
    pcap_link: str | None = field(default=None, compare=False)

    # -- tables ----------------------------------------------------------------------------
    @property
    def flows(self) -> Any:
        """One row per flow (polars DataFrame)."""
        return self.tables["flows"]

    @property
    def links(self) -> Any:
        """One row per link direction."""
        return self.tables["links"]

    @property
    def flow_series(self) -> Any:
        """Per-flow time series (empty when the metrics interval is 0)."""
        return self.tables["flow_series"]

    @property
    def link_series(self) -> Any:
        """Per-link time series (empty when the metrics interval is 0)."""
        return self.tables["link_series"]

    @property
    def transactions(self) -> Any:
        """One row per request/response exchange."""
        return self.tables["transactions"]

    @property
    def scenario(self) -> dict[str, Any]:
        """The resolved scenario the simulator ran."""
        return self.run_info["scenario"]

    @property
    def seed(self) -> int:
        return self.run_info["seed"]

    def link(self, name: str) -> dict[str, Any]:
        """The summary row of link direction ``name`` (``"a->b"``) as a dict."""
        import polars as pl

        rows = self.links.filter(pl.col("name") == name).to_dicts()
        if not rows:
            known = ", ".join(self.links["name"].to_list())
            raise KeyError(f"no link {name!r}; links: {known}")
        return rows[0]

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_native(
        cls, raw: dict[str, Any], *, native_version: str, source: str | None = None
    ) -> RunResult:
        stats = raw.get("stats", {})
        tables = {name: to_frame(name, raw.get("tables", {}).get(name)) for name in TABLE_NAMES}
        tables.update(_session_frames(raw))
        run_info = {
            "format": RUN_FORMAT,
            "xcclab_version": __version__,
            "native_version": native_version,
            "source": source,
            "seed": raw["seed"],
            "stats": {
                "events": stats.get("events"),
                "packet_hops": stats.get("packet_hops"),
                "sim_seconds": stats.get("sim_seconds"),
            },
            "tables": {name: {"rows": frame.height} for name, frame in tables.items()},
            "scenario": json.loads(raw["resolved"]),
        }
        timing = {
            "wall_seconds": stats.get("wall_seconds"),
            "threads": stats.get("threads", 1),
            "domains": stats.get("domains", 1),
            "finished_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "host": socket.gethostname(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
        }
        result = cls(run_info=run_info, timing=timing, tables=tables)
        result._add_references()
        return result

    def _add_references(self) -> None:
        """Fill the flows' reference columns (``xcclab.references``) from the resolved
        scenario, unless the table already has them (a run saved with them)."""
        import polars as pl

        from .references import derived_flow_columns
        from .schema import TABLES

        flows = self.tables["flows"]
        if "maxmin_bps" in flows.columns and flows["maxmin_bps"].null_count() < flows.height:
            return
        if not flows.height or "nodes" not in self.scenario:
            return
        try:
            values = derived_flow_columns(self.scenario, flows, self.flow_series)
        except ValueError as exc:  # e.g. a cc whose header size is unknown: no reference
            import warnings

            warnings.warn(f"no max-min reference for this run: {exc}", stacklevel=2)
            return
        dtypes = {c.name: c.dtype for c in TABLES["flows"]}
        self.tables["flows"] = flows.with_columns(
            pl.Series(name, col, dtype=pl.Float64 if dtypes[name] == "f64" else None)
            for name, col in values.items()
        )

    def max_min(self, utilisation: float | Any = None) -> list[float | None]:
        """Max-min fair payload rates (bit/s) of the flows, one per row of :attr:`flows`.

        ``utilisation``: None for each link's own target (MaxNet's mu, RCP's gamma, ...), a
        number for every link, or one per link direction. Flows outside the reference (sized,
        arrival and transaction flows, flows stopped before the end) get None.
        """
        from .references import max_min_rates

        by_id = max_min_rates(self.scenario, utilisation)
        return [by_id[i] if i < len(by_id) else None for i in self.flows["flow_id"].to_list()]

    def convergence(
        self, tolerance: float = 0.1, window_s: float | None = None, utilisation: Any = None
    ) -> list[float | None]:
        """Seconds from each flow's start until its delivery rate, over windows of
        ``window_s`` (default: four of its RTTs, rounded up to whole metrics intervals), stays
        within ``tolerance`` of its max-min reference to the end, for at least one window;
        None if it never does."""
        import polars as pl

        from .references import convergence_time, window_length, window_rates

        interval = self.scenario["metrics"]["interval_ns"] * 1e-9
        out: list[float | None] = []
        refs = self.max_min(utilisation)
        for row, ref in zip(self.flows.iter_rows(named=True), refs):
            if not interval or ref is None or ref <= 0:
                out.append(None)
                continue
            k = window_length(interval, row["srtt_s"], window_s)
            fs = self.flow_series.filter(pl.col("flow_id") == row["flow_id"]).sort("time_s")
            t = fs["time_s"].to_list()
            rate = window_rates(t, fs["delivered_bytes"].to_list(), k)
            c = convergence_time(t, rate, ref, tolerance, min_samples=k)
            out.append(None if c is None else max(0.0, c - (row["start_s"] or 0.0)))
        return out

    def jain(self, normalised: bool = True) -> float | None:
        """Jain's index of the flows: of ``late_rate_bps / maxmin_bps`` over the flows with a
        reference (``normalised``, 1 at the max-min rates), else of the whole-run goodputs."""
        import polars as pl

        if normalised:
            x = self.flows.filter(pl.col("maxmin_bps") > 0).select(
                pl.col("late_rate_bps") / pl.col("maxmin_bps")
            )
        else:
            x = self.flows.select("goodput_bps")
        v = x.to_series().drop_nulls().to_numpy()
        if not len(v) or not (v**2).sum():
            return None
        return float(v.sum() ** 2 / (len(v) * (v**2).sum()))

    # -- files -----------------------------------------------------------------------------
    def save(self, out: str | os.PathLike[str]) -> Path:
        """Write the run directory ``out`` atomically; return its path."""
        out = Path(out)
        with atomic_dir(out) as tmp:
            self.write_into(tmp)
        self.path = out
        return out

    def write_into(self, directory: Path) -> None:
        """Write run.json, timing.json and the Parquet tables into an existing directory."""
        (directory / "run.json").write_text(_json(self.run_info), encoding="utf-8")
        (directory / "timing.json").write_text(_json(self.timing), encoding="utf-8")
        for name in (*TABLE_NAMES, *(t for t in SESSION_TABLES if t in self.tables)):
            # zstd, statistics on: deterministic for the same data and polars version.
            self.tables[name].write_parquet(
                directory / f"{name}.parquet", compression="zstd", statistics=True
            )
        if self.pcap is not None:
            from .pcap import write_pcap

            write_pcap(directory / PCAP_FILE, self.pcap)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RunResult:
        """Read a run directory written by :meth:`save` (or ``xcc run``)."""
        import polars as pl

        directory = Path(directory)
        run_json = directory / "run.json"
        if not run_json.is_file():
            raise ScenarioError(f"{directory}: not a run directory (no run.json)")
        try:
            run_info = json.loads(run_json.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ScenarioError(f"{run_json}: invalid JSON: {exc}") from exc
        timing_path = directory / "timing.json"
        timing = (
            json.loads(timing_path.read_text(encoding="utf-8")) if timing_path.is_file() else {}
        )
        tables = {}
        for name in TABLE_NAMES:
            path = directory / f"{name}.parquet"
            tables[name] = pl.read_parquet(path) if path.is_file() else to_frame(name, None)
        for name in SESSION_TABLES:
            path = directory / f"{name}.parquet"
            if path.is_file():
                tables[name] = pl.read_parquet(path)
        result = cls(run_info=run_info, timing=timing, tables=tables, path=directory)
        result._add_references()  # runs saved before the reference columns existed
        return result

    # -- presentation ----------------------------------------------------------------------
    def plot(
        self,
        out: str | os.PathLike[str] | None = None,
        *,
        formats: tuple[str, ...] = ("png", "svg"),
        smooth: float | None = None,
    ) -> list[Path]:
        """Draw rates (with max-min references), cwnd and queues over time; return the files
        written. ``out`` defaults to ``<run dir>/plots``; ``smooth`` is the rate window in
        seconds."""
        from .plot import plot_run

        return plot_run(self, out, formats=formats, smooth=smooth)

    def summary(self, max_rows: int = 20) -> str:
        """A short plain-text summary: per-flow goodput and the busiest links."""
        import polars as pl

        stats = self.run_info["stats"]
        lines = [
            f"scenario {self.scenario.get('name', '?')!r}, seed {self.seed}: "
            f"{stats['sim_seconds']:g} s simulated, {stats['events']:,} events, "
            f"{stats['packet_hops']:,} packet-hops in {self.timing.get('wall_seconds', 0):.2f} s"
        ]
        flows = self.flows
        if flows.height:
            lines.append(f"{'flow':<16} {'goodput Mbps':>12} {'retx':>7} {'timeouts':>8}")
            for row in flows.head(max_rows).iter_rows(named=True):
                lines.append(
                    f"{row['name']:<16} {_num(row['goodput_bps'], 1e-6):>12} "
                    f"{row['retransmits'] or 0:>7} {row['timeouts'] or 0:>8}"
                )
            if flows.height > max_rows:
                lines.append(f"... {flows.height - max_rows} more flows")
        links = self.links
        if links.height:
            busiest = links.sort(["utilisation", "link_id"], descending=[True, False]).filter(
                pl.col("packets_in") > 0
            )
            lines.append(f"{'link':<16} {'util':>6} {'mean queue B':>12} {'drops':>7} {'marks':>7}")
            for row in busiest.head(min(max_rows, 5)).iter_rows(named=True):
                lines.append(
                    f"{row['name']:<16} {_num(row['utilisation'], 1, 3):>6} "
                    f"{_num(row['mean_queue_bytes'], 1, 0):>12} {row['drops']:>7} {row['marks']:>7}"
                )
        warnings = self.warnings()
        lines.extend(f"warning: {w}" for w in warnings[:MAX_SUMMARY_WARNINGS])
        if len(warnings) > MAX_SUMMARY_WARNINGS:
            lines.append(
                f"warning: ... and {len(warnings) - MAX_SUMMARY_WARNINGS} more flows like these "
                "(all of them: RunResult.warnings())"
            )
        return "\n".join(lines)

    def warnings(self) -> list[str]:
        """Flows a reader would otherwise miss: one that delivered nothing although it started
        before the end, and one whose rate over the second half is below a tenth of its max-min
        share (:data:`STARVED_SHARE`), each with the counters that point at a cause; and one
        the transport's window cap held back (``window_capped``), with the cap."""
        duration = self.scenario.get("duration_ns", 0) * 1e-9
        mss = {
            f["name"]: f["kind"]["transport"]["mss_bytes"]
            for f in self.scenario.get("flows", [])
            if f.get("kind", {}).get("kind") == "bulk"
        }
        out = []
        for row in self.flows.iter_rows(named=True):
            if row.get("window_capped"):
                cap = (
                    f"{window_cap_packets(mss[row['name']]):,} packets"
                    if row["name"] in mss
                    else f"{WINDOW_CAP_BYTES:,} B or {WINDOW_CAP_SEGMENTS:,} packets"
                )
                out.append(
                    f"flow {row['name']!r}: the transport's window reached its cap of {cap} "
                    f"(TCP's largest window, RFC 7323) and held a packet back "
                    f"{row['window_capped']:,} times: a standing queue that large, or a "
                    "controller asking for more than it should"
                )
            start = row.get("start_s") or 0.0
            if start >= duration:
                continue
            counters = (
                f"sent {row.get('bytes_sent') or 0:,} B, {row.get('retransmits') or 0} "
                f"retransmissions, {row.get('timeouts') or 0} timeouts, "
                f"{row.get('packets_dropped') or 0} packets dropped"
            )
            if not row.get("bytes_delivered"):
                out.append(
                    f"flow {row['name']!r} delivered nothing in its {duration - start:g} s "
                    f"({counters}; is a delay, a rate or a start time off by a unit?)"
                )
                continue
            late, share = row.get("late_rate_bps"), row.get("maxmin_bps")
            if late is not None and share and late < STARVED_SHARE * share:
                out.append(
                    f"flow {row['name']!r} got {late / 1e6:.3g} Mbit/s over the second half, "
                    f"{late / share:.1%} of its max-min share {share / 1e6:.3g} Mbit/s ({counters})"
                )
        return out


def _num(value: float | None, scale: float, digits: int = 2) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


#: Above this many characters (compact), a JSON file is written without indentation: Python's
#: indenting encoder is pure Python, 14 s for the run.json of a 20,000-flow dumbbell, where the
#: C encoder takes under one.
INDENT_JSON_UP_TO = 1 << 20


def _json(data: Any) -> str:
    compact = json.dumps(data, ensure_ascii=False, allow_nan=False)
    if len(compact) > INDENT_JSON_UP_TO:
        return compact + "\n"
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
