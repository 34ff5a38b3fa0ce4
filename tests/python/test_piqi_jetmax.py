"""PIQI-RCP and JetMax through the Python front end (reconstructed laws; see
docs/algorithms/piqi-rcp.md and jetmax.md): scenarios name them, runs are deterministic, and
three flows sharing one link get equal rates at the link's target utilisation."""

from __future__ import annotations

import polars as pl
import pytest

import xcclab

pytestmark = pytest.mark.native

DUMBBELL = """
name = "rate-explicit"
duration = "3s"

[[host]]
name = "s{{i}}"
count = 3

[[host]]
name = "d"

[[router]]
name = "r{{i}}"
count = 2

[[link]]
between = ["s{{i}}", "r1"]
count = 3
rate = "1Gbps"
buffer = "unlimited"

[[link]]
between = ["r1", "r2"]
rate = "50Mbps"
delay = "10ms"
buffer = "unlimited"
queue = {queue}

[[link]]
between = ["r2", "d"]
rate = "1Gbps"
buffer = "unlimited"

[[flow]]
name = "f{{i}}"
count = 3
src = "s{{i}}"
dst = "d"
cc = {cc}
"""


@pytest.mark.parametrize(
    ("queue", "cc", "gamma", "shim"),
    [
        ('{ kind = "piqi-rcp", gamma = 0.98 }', '"piqi-rcp"', 0.98, 10),
        ('{ kind = "jetmax", gamma = 0.9 }', '"jetmax"', 0.9, 13),
    ],
)
def test_three_flows_share_one_link_at_its_target(tmp_path, queue, cc, gamma, shim):
    path = tmp_path / "rate-explicit.toml"
    path.write_text(DUMBBELL.format(queue=queue, cc=cc))
    a = xcclab.run(path, seed=1, out=tmp_path / "a")
    xcclab.run(path, seed=1, out=tmp_path / "b")
    for name in ("flows.parquet", "flow_series.parquet", "link_series.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    series = a.flow_series.filter(pl.col("time_s") > 2.0)
    rates = series.group_by("flow_id").agg(pl.col("rate_bps").mean())["rate_bps"].to_list()
    # Routers count wire bytes (payload + 40 B header + the shim), goodput counts payload.
    want = gamma * 50e6 / 3 * 1460 / (1500 + shim)
    assert all(abs(r / want - 1) < 0.03 for r in rates), (rates, want)
