"""Shared fixtures: a fake native module (for tests of the Python layer alone) and the real one.

Tests marked ``native`` need the compiled ``xcclab._native``; they are skipped when it cannot be
imported (run ``make build``), everything else runs against :class:`FakeNative`, which follows
the contract of ``crates/xcc-py`` (see ``docs/architecture.md``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

try:
    from xcclab import _native as REAL_NATIVE  # noqa: N812
except ImportError:  # not built yet
    REAL_NATIVE = None

needs_native = pytest.mark.skipif(
    REAL_NATIVE is None, reason="xcclab._native is not built (run `make build`)"
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "native" in item.keywords and REAL_NATIVE is None:
            item.add_marker(needs_native)


NAN = math.nan


def fake_raw(seed: int = 1, resolved: dict | None = None) -> dict:
    """A native ``run`` result with two flows, two link directions and a short series."""
    resolved = resolved or {"name": "fake", "duration": "1s", "seed": seed}
    return {
        "resolved": json.dumps(resolved),
        "seed": seed,
        "stats": {"events": 1234, "packet_hops": 999, "sim_seconds": 1.0, "wall_seconds": 0.01},
        "tables": {
            "flow_series": {
                "time_s": [0.1, 0.2, 0.1, 0.2],
                "flow_id": [0, 0, 1, 1],
                "rate_bps": [1e6, 2e6, 3e6, 4e6],
                "cwnd_bytes": [3000, 4500, -1, -1],
                "ssthresh_bytes": [2**63 - 1, 2250, -1, -1],
                "srtt_s": [0.02, 0.021, NAN, NAN],
                "bytes_in_flight": [1500, 3000, -1, -1],
                "delivered_bytes": [12500, 37500, 37500, 87500],
            },
            "link_series": {
                "time_s": [0.1, 0.2, 0.1, 0.2],
                "link_id": [0, 0, 1, 1],
                "rate_bps": [4e6, 6e6, 1e5, 1e5],
                "utilisation": [0.4, 0.6, 0.01, 0.01],
                "queue_bytes": [0, 3000, 0, 0],
                "queue_packets": [0, 2, 0, 0],
                "drops": [0, 1, 0, 0],
                "marks": [0, 0, 0, 0],
                "gauge": [0.0, 0.0, 0.0, 0.0],
            },
            "flows": {
                "flow_id": [0, 1],
                "name": ["f1", "cbr1"],
                "kind": ["bulk", "cbr"],
                "src": ["a", "a"],
                "dst": ["b", "b"],
                "cc": ["newreno", "none"],
                "start_s": [0.0, 0.0],
                "stop_s": [NAN, 1.0],
                "size_bytes": [-1, 10000],
                "bytes_sent": [40000, 87500],
                "bytes_delivered": [37500, 87500],
                "goodput_bps": [300000.0, 700000.0],
                "fct_s": [NAN, 0.5],
                "packets_dropped": [1, 0],
                "retransmits": [1, 0],
                "timeouts": [0, 0],
                "fast_recoveries": [1, 0],
                "ecn_reductions": [0, 0],
                "ce_received": [0, 0],
                "min_rtt_s": [0.02, NAN],
                "srtt_s": [0.021, NAN],
            },
            "links": {
                "link_id": [0, 1],
                "name": ["a->b", "b->a"],
                "src": ["a", "b"],
                "dst": ["b", "a"],
                "rate_bps": [1e7, 1e7],
                "delay_s": [0.01, 0.01],
                "buffer_packets": [100, -1],
                "buffer_bytes": [-1, -1],
                "algorithm": ["droptail", "droptail"],
                "packets_in": [100, 50],
                "bytes_in": [150000, 2000],
                "packets_out": [99, 50],
                "bytes_out": [148500, 2000],
                "drops": [1, 0],
                "marks": [0, 0],
                "mean_queue_bytes": [1500.0, 0.0],
                "mean_queue_packets": [1.0, 0.0],
                "max_queue_bytes": [3000, 0],
                "mean_queue_delay_s": [0.0012, 0.0],
                "utilisation": [0.1188, 0.0016],
                "data_bytes_out": [148500, 0],
            },
            "transactions": {
                "txn_id": [],
                "name": [],
                "client": [],
                "server": [],
                "request_bytes": [],
                "response_bytes": [],
                "start_s": [],
                "response_time_s": [],
                "completion_time_s": [],
            },
        },
    }


class FakeNative:
    """Stands in for ``xcclab._native``; ``fail`` makes ``run`` raise that exception."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.fail = fail
        self.calls: list[dict] = []

    def version(self) -> str:
        return "fake-0"

    def validate(self, text: str, source: str, format: str = "toml") -> str:
        if self.fail is not None and isinstance(self.fail, ValueError):
            raise self.fail
        return json.dumps({"name": "fake", "host": [{"name": "a"}, {"name": "b"}]})

    def run(self, text, source, format="toml", seed=None, metrics=True, progress=None, threads=1):
        self.calls.append({"text": text, "source": source, "format": format, "seed": seed})
        if progress is not None:
            for frac in (0.25, 0.5, 1.0):
                progress(frac)
        if self.fail is not None:
            raise self.fail
        return fake_raw(seed if seed is not None else 1)


@pytest.fixture
def fake_native(monkeypatch):
    """Install a :class:`FakeNative` wherever the package loads the native module."""
    import xcclab.bench
    import xcclab.errors
    import xcclab.results

    fake = FakeNative()
    loader = lambda: fake  # noqa: E731
    monkeypatch.setattr(xcclab.errors, "load_native", loader)
    monkeypatch.setattr(xcclab.results, "load_native", loader)
    return fake


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    return path


#: A small valid scenario: two hosts, one router, one 10 Mbps bottleneck, one bulk flow.
TINY_TOML = """\
name = "tiny"
duration = "2s"

[[host]]
name = "a"

[[host]]
name = "b"

[[router]]
name = "r"

[[link]]
between = ["a", "r"]
rate = "100Mbps"
delay = "1ms"
buffer = "100pkt"

[[link]]
between = ["r", "b"]
rate = "10Mbps"
delay = "5ms"
buffer = "50pkt"

[[flow]]
name = "f"
src = "a"
dst = "b"

[metrics]
interval = "50ms"
"""
