"""The results catalog: DuckDB views over a sweep's Parquet files agree with polars."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from conftest import ROOT
from xcclab.cli import main
from xcclab.units import quantity_value

DATA = Path(__file__).parent / "data"

SPEC = f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2, 3]
[grid]
"link[1].delay" = ["1ms", "10ms", "30ms"]
"link[2].buffer" = ["10pkt", "30pkt"]
"""

#: The SQL blocks of docs/catalog.md's worked examples; the first is Jain's index vs delay.
EXAMPLES = re.findall(r"```sql\n(.*?)```", (ROOT / "docs" / "catalog.md").read_text(), re.S)


def test_quantity_value():
    assert quantity_value("5ms") == pytest.approx(0.005)
    assert quantity_value("10Mbps") == 1e7
    assert quantity_value("30pkt") == 30
    assert quantity_value(2) == 2.0
    assert quantity_value("unlimited") is None
    assert quantity_value(True) is None


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    import xcclab

    root = tmp_path_factory.mktemp("catalog")
    spec = root / "spec.toml"
    spec.write_text(SPEC)
    result = xcclab.sweep(spec, root / "sweep", jobs=2, progress=False)
    assert not result.failed
    xcclab.run(DATA / "tiny.toml", out=root / "single")  # a plain run beside the sweep
    return root


@pytest.mark.native
def test_doc_examples_run_and_jain_matches_polars_on_the_parquet_files(swept):
    import xcclab

    assert len(EXAMPLES) >= 3
    with xcclab.catalog(swept) as cat:
        assert cat.run_count == 19
        for sql in EXAMPLES:
            assert cat.sql(sql).height > 0, sql
        got = cat.sql(EXAMPLES[0])

    # The same numbers, straight from the files: manifest -> run dirs -> flows.parquet.
    manifest = pl.read_parquet(swept / "sweep" / "manifest.parquet")
    per_run = []
    for row in manifest.iter_rows(named=True):
        g = pl.read_parquet(swept / "sweep" / row["run_dir"] / "flows.parquet")["goodput_bps"]
        jain = g.sum() ** 2 / (len(g) * (g**2).sum())
        per_run.append({"delay": row["link_1_delay"], "buffer": row["link_2_buffer"], "j": jain})
    want = (
        pl.DataFrame(per_run)
        .group_by("delay", "buffer")
        .agg(pl.col("j").mean().alias("mean"), pl.col("j").std().alias("sd"), pl.len())
        .with_columns(pl.col("delay").map_elements(quantity_value, return_dtype=pl.Float64))
        .sort("delay", "buffer")
    )
    assert got["link_1_delay"].to_list() == ["1ms", "1ms", "10ms", "10ms", "30ms", "30ms"]
    assert got["link_2_buffer"].to_list() == want["buffer"].to_list()
    assert got["mean_jain"].to_list() == pytest.approx(want["mean"].to_list(), rel=1e-12)
    assert got["sd_jain"].to_list() == pytest.approx(want["sd"].to_list(), rel=1e-9)
    assert got["seeds"].to_list() == [3] * 6 == want["len"].to_list()
    # A longer RTT for f2 changes the split: the index is not flat across the sweep.
    assert got["mean_jain"].n_unique() > 1


@pytest.mark.native
def test_views_tag_rows_with_run_and_parameters(swept):
    import xcclab

    with xcclab.catalog(swept) as cat:
        runs = cat.sql("SELECT * FROM runs ORDER BY run_dir")
        assert runs.filter(pl.col("sweep").is_null())["run_dir"].to_list() == ["single"]
        sweep_rows = runs.filter(pl.col("sweep") == "spec")  # the spec's name
        assert sweep_rows.height == 18
        assert set(sweep_rows["sweep_dir"].to_list()) == {"sweep"}
        si = sorted(set(sweep_rows["link_1_delay_si"].to_list()))
        assert si == pytest.approx([0.001, 0.01, 0.03])
        # The text column sorts by its number: "10ms" after "1ms", "30ms" last.
        ordered = cat.sql(
            "SELECT link_1_delay FROM runs WHERE sweep IS NOT NULL ORDER BY link_1_delay, run_dir"
        )["link_1_delay"].to_list()
        assert ordered == ["1ms"] * 6 + ["10ms"] * 6 + ["30ms"] * 6
        assert cat.sql("SELECT count(*) AS n FROM flows WHERE link_1_delay = '10ms'")["n"][0] > 0
        for name in ("flows", "links", "flow_series", "link_series", "transactions"):
            counts = cat.sql(f"SELECT run_dir, count(*) AS n FROM {name} GROUP BY run_dir")
            for row in counts.iter_rows(named=True):
                on_disk = pl.read_parquet(swept / row["run_dir"] / f"{name}.parquet").height
                assert row["n"] == on_disk, (name, row)
        links = cat.sql("SELECT DISTINCT name FROM links WHERE point_id IS NOT NULL")
        assert "r1->r2" in links["name"].to_list()


@pytest.mark.native
def test_xcc_query_cli_formats_and_errors(swept, capsys):
    assert (
        main(["query", "SELECT count(*) AS n FROM runs", "--root", str(swept), "--format", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out) == [{"n": 19}]
    assert main(["query", "SELECT nope FROM runs", "--root", str(swept)]) == 2
    assert "xcc: error: query:" in capsys.readouterr().err


def test_empty_root_has_typed_empty_views(tmp_path):
    import xcclab

    with xcclab.catalog(tmp_path) as cat:
        assert cat.sql("SELECT count(*) AS n FROM flows")["n"][0] == 0
        assert "goodput_bps" in cat.sql("SELECT * FROM flows").columns
    assert cat_columns(tmp_path, "session_rates") == [
        "error_pct",
        "flow_id",
        "maxmin_bps",
        "rate_bps",
        "time_s",
    ]


def cat_columns(root: Path, table: str) -> list[str]:
    """The data columns of view ``table`` (without the run tags), sorted."""
    import xcclab

    with xcclab.catalog(root) as cat:
        tags = set(cat.sql("SELECT * FROM runs LIMIT 0").columns)
        return sorted(c for c in cat.sql(f"SELECT * FROM {table}").columns if c not in tags)


SESSIONS = """name = "sessions-query"
duration = "0.6s"
seed = 2

[sessions]
protocol = "slbn"
packet_size = "1000B"
sample_interval = "0.3s"
workload = { arrivals = [{ count = 20, from_s = 0.0, to_s = 0.05 }] }

[sessions.topology.transit_stub]
transit_domains = 1
transit_routers_per_domain = 2
stubs_per_transit_router = 1
routers_per_stub = 2
hosts_per_stub_router = 10
transit_capacity_bps = 1e9
transit_stub_capacity_bps = 200e6
stub_capacity_bps = 200e6
host_capacity_bps = 100e6
"""


def test_session_tables_are_typed_written_and_queried(tmp_path):
    """A `[sessions]` run's optional tables are typed by the one schema (NaN -> null), written
    beside the per-run tables, read back equal, and queried next to a run without them; a
    run without them writes none."""
    import xcclab
    from xcclab.schema import OPTIONAL_TABLE_NAMES, TABLE_NAMES, TABLES

    assert set(OPTIONAL_TABLE_NAMES) == {
        "session_samples",
        "session_rates",
        "pfc_ports",
        "fct",
        "slowdown",
        "queue_cdf",
    }
    assert not set(OPTIONAL_TABLE_NAMES) & set(TABLE_NAMES)
    (tmp_path / "s.toml").write_text(SESSIONS)
    res = xcclab.run(tmp_path / "s.toml", out=tmp_path / "runs" / "sessions", progress=False)
    samples = res.tables["session_samples"]
    assert samples.columns == [c.name for c in TABLES["session_samples"]]
    assert samples.height == 2 and samples["es_mean"][0] is None  # nobody rated yet: null
    assert samples["rated"][1] == 20
    back = xcclab.RunResult.load(tmp_path / "runs" / "sessions")
    assert back.tables["session_rates"].equals(res.tables["session_rates"])
    plain = tmp_path / "runs" / "plain"
    xcclab.run(ROOT / "scenarios" / "dumbbell-10.toml", out=plain, progress=False)
    assert not (plain / "session_rates.parquet").exists()
    with xcclab.catalog(tmp_path / "runs") as cat:
        got = cat.sql(
            "SELECT run_dir, count(*) AS n, max(abs(error_pct)) AS worst "
            "FROM session_rates GROUP BY run_dir"
        )
        assert got["run_dir"].to_list() == ["sessions"] and got["n"][0] == 20
        assert got["worst"][0] < 5.0
        assert cat.sql("SELECT count(*) AS n FROM session_samples")["n"][0] == 2
