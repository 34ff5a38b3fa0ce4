"""Build scenarios in Python.

A :class:`Scenario` holds exactly the structure of a scenario TOML file (see
``docs/scenario-format.md``): top-level ``name``, ``description``, ``duration``, ``seed``,
arrays of tables ``host``, ``router``, ``link``, ``flow``, ``arrivals``, ``transactions``
and the ``metrics`` table. It is handed to the simulator as JSON (``format="json"``), where
the native module applies the same strict checks as for a TOML file, so every error still
names the field and what was expected.

Values are written as the TOML file would write them: strings with units (``"10Gbps"``,
``"2500us"``, ``"1500B"``, ``"240pkt"``). A bare number is refused, as in a TOML file
(``delay=10`` could mean 10 ms or 10 s): write the unit, or convert a number in SI base units
explicitly with :func:`fmt_time` (seconds), :func:`fmt_rate` (bit/s) or :func:`fmt_size`
(bytes), e.g. ``delay=fmt_time(0.0025)``. Zero needs no unit (``delay=0``); an int buffer is a
packet count (``buffer=100``). Nothing else is checked here: validation is the simulator's job,
so the rules live in one place.

Example::

    sc = Scenario("two-flows", duration="10s")
    sc.add_host("s{i}", count=2).add_host("d{i}", count=2).add_router("r1").add_router("r2")
    sc.add_link("s{i}", "r1", rate="1Gbps", delay="1ms", count=2)
    sc.add_link("r1", "r2", rate="100Mbps", delay="10ms", buffer="100pkt")
    sc.add_link("r2", "d{i}", rate="1Gbps", delay="1ms", count=2)
    sc.add_flow("f{i}", src="s{i}", dst="d{i}", count=2)
    sc.metrics(interval="100ms")
    xcclab.run(sc, out="out/two-flows")
"""

from __future__ import annotations

import copy
import json
import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Any, Union

from .errors import ScenarioError

Number = Union[int, float]

#: Arrays of tables, in the order a scenario file lists them.
ARRAY_TABLES = ("host", "router", "link", "flow", "arrivals", "transactions")

_TIME_UNITS = (("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1))
_RATE_UNITS = (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3), ("bps", 1))
_SIZE_UNITS = (("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("B", 1))


def _exact(value: Number, units: tuple[tuple[str, int], ...], scale: int, what: str) -> str:
    """Write ``value * scale`` base units with the largest unit that keeps an integer."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what}: expected a number or a string with a unit, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what}: expected a finite number, got {value!r}")
    base = Fraction(value).limit_denominator(10**9) * scale
    base_int = round(base)
    if abs(base - base_int) > Fraction(1, 1000):
        raise ValueError(f"{what}: {value!r} is finer than the smallest unit")
    for unit, factor in units:
        if base_int % factor == 0:
            return f"{base_int // factor}{unit}"
    raise AssertionError("unreachable: the last unit has factor 1")


def fmt_time(value: str | Number) -> str:
    """``0.0025`` (seconds) -> ``"2500us"``; strings pass through unchanged."""
    return value if isinstance(value, str) else _exact(value, _TIME_UNITS, 10**9, "time")


def fmt_rate(value: str | Number) -> str:
    """``70e6`` (bit/s) -> ``"70Mbps"``; strings pass through unchanged."""
    return value if isinstance(value, str) else _exact(value, _RATE_UNITS, 1, "rate")


def fmt_size(value: str | Number) -> str:
    """``1500`` (bytes) -> ``"1500B"``; strings pass through unchanged."""
    return value if isinstance(value, str) else _exact(value, _SIZE_UNITS, 1, "size")


#: Per kind of quantity: the explicit converter's name and an example of the unit written out.
_QUANTITY_HINTS = {
    fmt_time: ("fmt_time", "seconds", '"10ms"'),
    fmt_rate: ("fmt_rate", "bit/s", '"100Mbps"'),
    fmt_size: ("fmt_size", "bytes", '"1500B"'),
}


def _with_unit(value: str | Number | None, fmt: Any, field: str) -> str | None:
    """A quantity field of the builder: strings (with their unit) pass, ``0`` is zero in any
    unit, any other bare number is an error naming the field and the explicit spelling."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return fmt(value)
    name, base, example = _QUANTITY_HINTS[fmt]
    raise ScenarioError(
        f"{field}={value!r}: a bare number has no unit (is it ms or s? bit/s or Mbit/s?); "
        f"write it with one, e.g. {field}={example}, or convert a number in {base} explicitly: "
        f"{field}={name}({value!r})"
    )


def _buffer(value: str | int | None) -> str | None:
    """Buffers: an int is a number of packets; strings (``"100KB"``, ``"unlimited"``) pass."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"buffer: expected packets (int) or a string, got {value!r}")
    return f"{value}pkt"


def already_open(transport: dict[str, Any] | None = None) -> dict[str, Any]:
    """``transport`` (a flow's transport table) with ``connection = "open"``: the connection is
    open when the flow starts, with no SYN / SYN-ACK (ns-2's one-way agents; the default is a
    handshake). The reproductions of papers that used ns-2 or their own simulators say so
    explicitly, which keeps their results what they were before handshakes existed."""
    return {**(transport or {}), "connection": "open"}


def _put(entry: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Add the fields that are not None, in order."""
    for key, value in fields.items():
        if value is not None:
            entry[key] = value
    return entry


class Scenario:
    """A scenario under construction; ``add_*`` methods return ``self`` so calls chain."""

    def __init__(
        self,
        name: str,
        duration: str | Number,
        *,
        description: str | None = None,
        seed: int | None = None,
    ) -> None:
        self._data: dict[str, Any] = _put(
            {},
            name=name,
            description=description,
            duration=_with_unit(duration, fmt_time, "duration"),
            seed=seed,
        )

    # -- top level -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._data["name"]

    @property
    def duration(self) -> str:
        return self._data["duration"]

    @duration.setter
    def duration(self, value: str | Number) -> None:
        self._data["duration"] = _with_unit(value, fmt_time, "duration")

    @property
    def seed(self) -> int | None:
        return self._data.get("seed")

    @seed.setter
    def seed(self, value: int | None) -> None:
        if value is None:
            self._data.pop("seed", None)
        else:
            self._data["seed"] = value

    def _append(self, table: str, entry: dict[str, Any]) -> Scenario:
        self._data.setdefault(table, []).append(entry)
        return self

    # -- nodes -----------------------------------------------------------------------------
    def add_host(self, name: str, *, count: int | None = None) -> Scenario:
        """An end host. With ``count=N``, ``{i}`` in the name expands to 1..N."""
        return self._append("host", _put({}, name=name, count=count))

    def add_router(self, name: str, *, count: int | None = None) -> Scenario:
        """A router (forwards packets; its output links run the queue disciplines)."""
        return self._append("router", _put({}, name=name, count=count))

    # -- links -----------------------------------------------------------------------------
    def add_link(
        self,
        a: str,
        b: str,
        *,
        rate: str | Number,
        delay: str | Number,
        buffer: str | int | None = None,
        queue: str | dict[str, Any] | None = None,
        loss: float | None = None,
        jitter: str | Number | None = None,
        count: int | None = None,
        reverse: dict[str, Any] | None = None,
    ) -> Scenario:
        """A duplex link ``a <-> b``; ``reverse`` overrides fields for the ``b -> a`` direction.

        ``buffer`` may be an int (packets) or a string (``"240pkt"``, ``"100KB"``,
        ``"unlimited"``); ``queue`` is ``"droptail"`` or a table such as
        ``{"kind": "red", "min_th": "30pkt", ...}``.
        """
        entry = _put(
            {},
            between=[a, b],
            count=count,
            rate=_with_unit(rate, fmt_rate, "rate"),
            delay=_with_unit(delay, fmt_time, "delay"),
            buffer=_buffer(buffer),
            queue=copy.deepcopy(queue),
            loss=loss,
            jitter=_with_unit(jitter, fmt_time, "jitter"),
        )
        if reverse:
            rev = dict(reverse)
            for key, fmt in (("rate", fmt_rate), ("delay", fmt_time), ("jitter", fmt_time)):
                if key in rev and rev[key] is not None:
                    rev[key] = _with_unit(rev[key], fmt, f"reverse.{key}")
            if rev.get("buffer") is not None:
                rev["buffer"] = _buffer(rev["buffer"])
            entry["reverse"] = rev
        return self._append("link", entry)

    # -- traffic ---------------------------------------------------------------------------
    def add_flow(
        self,
        name: str,
        src: str,
        dst: str,
        *,
        kind: str = "bulk",
        start: str | Number = "0s",
        stop: str | Number | None = None,
        size: str | Number | None = None,
        cc: str | dict[str, Any] | None = None,
        rate: str | Number | None = None,
        packet_size: str | Number | None = None,
        route: list[str] | None = None,
        transport: dict[str, Any] | None = None,
        count: int | None = None,
        protocol: str | dict[str, Any] | None = None,
        demand: str | Number | None = None,
    ) -> Scenario:
        """A flow: ``kind="bulk"`` (reliable transport + ``cc``), ``"cbr"`` (``rate``) or
        ``"session"`` (an explicit-rate session ``protocol``, optional ``demand``)."""
        entry = _put(
            {},
            name=name,
            count=count,
            kind=kind,
            src=src,
            dst=dst,
            start=_with_unit(start, fmt_time, "start"),
            stop=_with_unit(stop, fmt_time, "stop"),
            size=_with_unit(size, fmt_size, "size"),
            cc=copy.deepcopy(cc),
            rate=_with_unit(rate, fmt_rate, "rate"),
            packet_size=_with_unit(packet_size, fmt_size, "packet_size"),
            route=None if route is None else list(route),
            transport=_transport(transport),
            protocol=copy.deepcopy(protocol),
            demand=_with_unit(demand, fmt_rate, "demand"),
        )
        return self._append("flow", entry)

    def add_arrivals(
        self,
        name: str,
        src: str,
        dst: str,
        *,
        mean_interarrival: str | Number,
        size: dict[str, Any],
        start: str | Number = "0s",
        stop: str | Number | None = None,
        cc: str | dict[str, Any] | None = None,
        transport: dict[str, Any] | None = None,
        count: int | None = None,
    ) -> Scenario:
        """Poisson arrivals of sized bulk flows; ``size`` is a distribution table, e.g.
        ``{"dist": "pareto", "mean": "150KB", "shape": 1.4}``."""
        entry = _put(
            {},
            name=name,
            count=count,
            src=src,
            dst=dst,
            start=_with_unit(start, fmt_time, "start"),
            stop=_with_unit(stop, fmt_time, "stop"),
            mean_interarrival=_with_unit(mean_interarrival, fmt_time, "mean_interarrival"),
            size=copy.deepcopy(size),
            cc=copy.deepcopy(cc),
            transport=_transport(transport),
        )
        return self._append("arrivals", entry)

    def add_transactions(
        self,
        name: str,
        client: str,
        server: str,
        *,
        count: int,
        request: str | Number,
        response: str | Number,
        start: str | Number = "0s",
        stop: str | Number | None = None,
        cc: str | dict[str, Any] | None = None,
        transport: dict[str, Any] | None = None,
        persistent: bool | None = None,
    ) -> Scenario:
        """``count`` request/response exchanges whose start times spread uniformly over
        ``[start, stop)``; each opens its own connection unless ``persistent``."""
        entry = _put(
            {},
            name=name,
            client=client,
            server=server,
            count=count,
            start=_with_unit(start, fmt_time, "start"),
            stop=_with_unit(stop, fmt_time, "stop"),
            request=_with_unit(request, fmt_size, "request"),
            response=_with_unit(response, fmt_size, "response"),
            cc=copy.deepcopy(cc),
            transport=_transport(transport),
            persistent=persistent,
        )
        return self._append("transactions", entry)

    def metrics(self, *, interval: str | Number) -> Scenario:
        """Time-series sampling interval; ``"0s"`` disables the series tables."""
        self._data["metrics"] = {"interval": _with_unit(interval, fmt_time, "interval")}
        return self

    # -- conversion ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the scenario as plain dicts and lists (the TOML structure)."""
        return copy.deepcopy(self._data)

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self._data, indent=indent)

    def to_toml(self, *, header: str | None = None) -> str:
        """The scenario as a TOML file (inverse of :meth:`load` for files it wrote).

        ``header`` is written first as ``#`` comment lines (e.g. the choices a paper leaves open).
        """
        return dumps_toml(self._data, header=header)

    def copy(self) -> Scenario:
        return Scenario.from_dict(self._data)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the scenario as TOML (``.toml``) or JSON (``.json``)."""
        from ._fsutil import write_text_atomic

        path = Path(path)
        text = self.to_json(indent=2) + "\n" if path.suffix == ".json" else self.to_toml()
        return write_text_atomic(path, text)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        """Wrap an existing scenario structure (no checks; the simulator validates)."""
        if not isinstance(data, dict):
            raise ScenarioError(f"expected a scenario table, got {type(data).__name__}")
        obj = cls.__new__(cls)
        obj._data = copy.deepcopy(data)
        return obj

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a scenario TOML (or ``.json``) file."""
        path = Path(path)
        text = read_scenario_text(path)
        try:
            data = json.loads(text) if path.suffix == ".json" else _toml_loads(text)
        except ValueError as exc:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
            raise ScenarioError(f"{path}: not a valid scenario file: {exc}") from exc
        return cls.from_dict(data)

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(self._data[t])} {t}" for t in ARRAY_TABLES if t in self._data)
        return (
            f"Scenario({self.name!r}, duration={self.duration!r}{', ' if counts else ''}{counts})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other._data == self._data


def _transport(transport: dict[str, Any] | None) -> dict[str, Any] | None:
    if transport is None:
        return None
    out = dict(transport)
    for key in ("mss", "header"):
        if key in out:
            out[key] = _with_unit(out[key], fmt_size, f"transport.{key}")
    for key in ("delayed_ack", "min_rto", "initial_rto"):
        if key in out and not isinstance(out[key], bool):
            out[key] = _with_unit(out[key], fmt_time, f"transport.{key}")
    return out


def read_scenario_text(path: str | os.PathLike[str]) -> str:
    """Read a scenario file, turning OS errors into a :class:`ScenarioError`."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ScenarioError(f"{path}: no such scenario file") from exc
    except IsADirectoryError as exc:
        raise ScenarioError(f"{path}: is a directory, expected a scenario file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read scenario: {exc}") from exc


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def dumps_toml(data: dict[str, Any], *, header: str | None = None) -> str:
    """Write a scenario structure as TOML (tomli-w), under ``header`` as comment lines."""
    import tomli_w

    text = tomli_w.dumps(data)
    if not header:
        return text
    comments = "\n".join(f"# {line}".rstrip() for line in header.strip("\n").splitlines())
    return comments + "\n\n" + text
