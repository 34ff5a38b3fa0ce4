"""The scenario reference cannot drift from the code: every `queue` and `cc` kind has a section
on its algorithm's page (docs/algorithms/<name>.md, "In a scenario") whose parameter table is
checked against the parser, and every algorithm of the registry (`xcc list`,
xcclab.algorithms) is in docs/scenario-format.md's table by name (generated; test_docs.py
checks it is current)."""

from __future__ import annotations

import copy
import re

import pytest

from conftest import ROOT
from xcclab.algorithms import algorithms
from xcclab.scenario import _toml_loads

pytest.importorskip("xcclab._native")

DOC = (ROOT / "docs" / "scenario-format.md").read_text()
PAGES = "\n".join(p.read_text() for p in sorted((ROOT / "docs" / "algorithms").glob("*.md")))
BASE = _toml_loads((ROOT / "scenarios" / "parking-lot.toml").read_text())


def sections(field: str) -> dict[str, str]:
    """``### field = "kind"`` heading of an algorithm page -> the text up to the next heading."""
    parts = re.split(rf'^### {field} = "([a-z-]+)"\n', PAGES, flags=re.M)
    return {kind: body.split("\n#")[0] for kind, body in zip(parts[1::2], parts[2::2])}


def documented_params(body: str) -> dict[str, str]:
    """Parameter -> its documented default, from the section's table (``a`, `b`` rows give
    both names)."""
    params = {}
    for row in re.findall(r"^\| (`[^|]+) \| [^|]* \| ([^|]*) \|", body, flags=re.M):
        for name in re.findall(r"`([a-z_0-9]+)`", row[0]):
            params[name] = row[1].strip()
    return params


def error_of(field: str, value) -> str:
    import xcclab

    sc = copy.deepcopy(BASE)
    # An explicit protocol's flow must cross a router of its kind: the other field is set
    # to what the checked value needs, so only the value under test can be refused.
    for flow in sc["flow"]:
        flow["cc"] = "newreno"
    if field == "queue":
        sc["link"][0]["queue"] = value
    else:
        sc["flow"][0]["cc"] = value
        kind = value.get("kind") if isinstance(value, dict) else value
        for link in sc["link"]:
            link["int"] = True  # INT-reading senders need INT-capable ports on their route
            if "queue" in link:
                link["queue"] = kind if kind in sections("queue") else "droptail"
    try:
        xcclab.validate(sc)
    except ValueError as exc:
        return str(exc)
    return ""


def parser_kinds(field: str) -> list[str]:
    message = error_of(field, "no-such-kind")
    return re.search(r"\(known: ([^)]*)\)", message).group(1).split(", ")


def parser_params(field: str, kind: str) -> set[str]:
    """The fields the parser accepts for ``kind`` (serde lists them for an unknown one)."""
    message = error_of(field, {"kind": kind, "no_such_field": 1})
    if "takes no parameters" in message:
        return set()
    listed = set(re.findall(r"`([a-z_0-9]+)`", message.split("expected", 1)[1])) - {"kind"}
    # xcp and rcp sources share newreno's table type but reject its field
    return {p for p in listed if "takes no parameters" not in error_of(field, {"kind": kind, p: 1})}


@pytest.mark.parametrize("field", ["queue", "cc"])
def test_every_kind_the_parser_knows_has_a_section(field):
    assert set(parser_kinds(field)) == set(sections(field)), field


@pytest.mark.parametrize(
    "field, kind",
    [("queue", k) for k in sections("queue")] + [("cc", k) for k in sections("cc")],
)
def test_parameter_tables_match_the_parser(field, kind):
    body = sections(field)[kind]
    doc = documented_params(body)
    assert set(doc) == parser_params(field, kind), (field, kind)
    # every documented default is a value the parser takes (with the required fields given)
    required = {"red": {"min_th": "30pkt", "max_th": "90pkt"}, "markmax": {"theta": "240pkt"}}
    for name, default in doc.items():
        if not default.startswith("`") or default.count("`") != 2:
            continue  # "required", "the preset's", "0.85 `theta` (rounded)": not a literal
        literal = default.split("`")[1]  # "`0.0` (the NIC's link rate)": the literal, then words
        value = _toml_loads(f"v = {literal}")["v"]
        table = {"kind": kind, **required.get(kind, {}), name: value}
        assert error_of(field, table) == "", (field, kind, name, literal)
    # and the section's own TOML examples are accepted
    for example in re.findall(r"```toml\n(.*?)```", body, flags=re.S):
        for line in example.strip().splitlines():
            assert error_of(field, _toml_loads(line)[field]) == "", line


def test_every_registered_algorithm_is_named_in_the_reference():
    """Each algorithm has a row in the table by name; each scenario kind it names has its section
    on that algorithm's own page."""
    table = DOC.split("### Algorithms by name", 1)[1]
    for algo in algorithms():
        row = re.search(rf"^\| `{re.escape(algo.name)}` \| ([^|]+) \| ([^|]+) \|", table, re.M)
        assert row, f"docs/scenario-format.md: no row for {algo.name!r} in 'Algorithms by name'"
        assert row.group(1).strip() == algo.role, algo.name
        usage = row.group(2)
        named = re.findall(r'(cc|queue) = \{ kind = "([a-z-]+)"', usage)
        page = (ROOT / "docs" / "algorithms" / f"{algo.name}.md").read_text()
        for field, kind in named:
            assert kind == algo.name, (algo.name, usage)
            assert f'### {field} = "{kind}"\n' in page, (
                f"docs/algorithms/{kind}.md: no section {field} = {kind!r}"
            )
        if not named:
            assert "session protocol" in usage, algo.name


def enumeration(column: str) -> set[str]:
    text = (ROOT / "docs" / "output-schema.md").read_text()
    row = re.search(rf"^\| `{re.escape(column)}` \| ([^\n]*) \|$", text, re.M)
    assert row, f"docs/output-schema.md: no enumeration row for {column}"
    return set(re.findall(r"`([a-z_-]+)`", row.group(1))) - {"cc", "queue"}


@pytest.mark.native
def test_output_schema_enumerations_are_what_runs_write():
    import xcclab

    required = {"red": {"min_th": "30pkt", "max_th": "90pkt"}, "markmax": {"theta": "240pkt"}}
    algorithms, ccs = set(), set()
    for kind in parser_kinds("queue"):
        sc = copy.deepcopy(BASE)
        sc["duration"] = "100ms"
        sc["link"][0]["queue"] = {"kind": kind, **required.get(kind, {})}
        for flow in sc["flow"]:
            flow["cc"] = "newreno"  # explicit sources need their own routers on the path
        algorithms.add(xcclab.run(sc, series=False).links["algorithm"][0])
    queues = parser_kinds("queue")
    for kind in parser_kinds("cc"):
        sc = copy.deepcopy(BASE)
        sc["duration"] = "100ms"
        # each source over its own router: a MaxNet source that never sees a price sends at
        # x_max, which no test should ask the simulator to do
        for link in sc["link"][:3]:
            link["queue"] = kind if kind in queues else "droptail"
        for link in sc["link"]:
            link["int"] = True  # INT-reading senders need INT-capable ports on their route
        for flow in sc["flow"]:
            flow["cc"] = kind
        sc["flow"].append(
            {"name": "c", "kind": "cbr", "src": "src1", "dst": "dst1", "rate": "1Mbps"}
        )
        ccs |= set(xcclab.run(sc, series=False).flows["cc"])
    kinds = {"bulk", "cbr", "arrival", "request", "response"}
    for protocol in session_protocols():
        sc = copy.deepcopy(BASE)
        sc["duration"] = "100ms"
        sc["flow"].append(
            {"name": "s", "kind": "session", "src": "src1", "dst": "dst1", "protocol": protocol}
        )
        flows = xcclab.run(sc, series=False).flows
        ccs |= set(flows["cc"])
        kinds |= set(flows["kind"])
    assert algorithms == enumeration("links.algorithm")
    assert ccs == enumeration("flows.cc")
    assert enumeration("flows.kind") == kinds


def test_output_schema_rows_match_the_schema():
    """Each column's row in docs/output-schema.md is what the schema declares: type, unit,
    nullability and meaning, word for word."""
    from xcclab.schema import TABLES

    text = (ROOT / "docs" / "output-schema.md").read_text()
    types = {"i64": "int64", "f64": "float64", "str": "string"}
    for table, cols in TABLES.items():
        section = text.split(f"### `{table}.parquet`", 1)[1].split("\n### ", 1)[0]
        for c in cols:
            nullable = "yes" if c.nullable else ""
            row = f"| `{c.name}` | {types[c.dtype]} | {c.unit} | {nullable} | {c.doc} |"
            assert row in section, f"docs/output-schema.md, {table}: expected the row\n{row}"


def session_protocols() -> list[str]:
    """The session flows' `protocol` kinds the parser knows."""
    import xcclab

    sc = copy.deepcopy(BASE)
    sc["flow"].append(
        {"name": "s", "kind": "session", "src": "src1", "dst": "dst1", "protocol": "no-such"}
    )
    try:
        xcclab.validate(sc)
    except ValueError as exc:
        return re.search(r"\(known: ([^)]*)\)", str(exc)).group(1).split(", ")
    raise AssertionError("an unknown session protocol was accepted")


def test_session_protocols_are_documented():
    """Every `protocol` the parser knows is in the reference's flow table and its sessions
    section, and in the generated enumeration of `flows.cc`."""
    from xcclab.algorithms import registry_names

    known = session_protocols()
    assert set(known) == set(registry_names()["session"])
    flow_row = re.search(r"^\| session only: `protocol` \|[^\n]*$", DOC, re.M).group(0)
    sessions = DOC.split("\n## Sessions\n", 1)[1].split("\n## ", 1)[0]
    for p in known:
        assert f'`"{p}"`' in flow_row, p
        assert f"algorithms/{p.replace('_', '-')}.md" in sessions, p  # pages use hyphens
    # the section's example is accepted
    for example in re.findall(r"```toml\n(.*?)```", sessions, flags=re.S):
        import xcclab

        entry = _toml_loads(example)["flow"][0]
        sc = copy.deepcopy(BASE)
        sc["flow"].append({**entry, "src": "src1", "dst": "dst1"})
        xcclab.validate(sc)
