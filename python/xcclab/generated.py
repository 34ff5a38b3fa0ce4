"""Regions of hand-written files that are generated from the Rust registries, so that no list
of algorithms or headers is kept by hand:

- ``tools/wireshark/xcclab.lua``: the congestion-header table (number, name, length, fields)
  from ``_native.congestion_headers()``;
- ``README.md``: the status table of ``xcc list`` (``xcclab.algorithms``);
- ``docs/scenario-format.md``: the table of algorithms by name, with how a scenario names each
  and its page;
- ``docs/output-schema.md``: the values of the enumerated columns (``flows.cc``,
  ``links.algorithm``).

Each region sits between a ``BEGIN GENERATED`` and an ``END GENERATED`` line. After adding an
algorithm or a header::

    python -m xcclab.generated            # rewrite the regions
    python -m xcclab.generated --check    # exit 1 if a region is stale (the tests run this)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .algorithms import algorithms, registry_names
from .errors import load_native

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "python -m xcclab.generated"


@dataclass(frozen=True)
class Region:
    path: str  # relative to the checkout
    begin: str
    end: str
    render: Callable[[], str]


def _lua_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dissector_headers() -> str:
    """The dissector's ``CC_HEADERS`` table."""
    lines = ["local CC_HEADERS = {"]
    for proto, name, length, fields, record_len in load_native().congestion_headers():
        record = f", record = {record_len}" if record_len else ""
        lines.append(
            f"    [{proto}] = {{ name = {_lua_string(name)}, len = {length}{record}, fields = {{"
        )
        for fname, label, offset, kind, width, frac_bits, flag, flag_label in fields:
            entry = (
                f"name = {_lua_string(fname)}, label = {_lua_string(label)}, offset = {offset}, "
                f"kind = {_lua_string(kind)}, width = {width}"
            )
            if frac_bits is not None:
                entry += (
                    f", frac_bits = {frac_bits}, flag = {_lua_string(flag)}, "
                    f"flag_label = {_lua_string(flag_label)}"
                )
            lines.append(f"        {{ {entry} }},")
        lines.append("    } },")
    lines.append("}")
    return "\n".join(lines)


def status_table() -> str:
    """README's table: what ``xcc list`` prints."""
    lines = ["| algorithm | role | status | provenance | page |", "|---|---|---|---|---|"]
    for a in algorithms():
        page = f"[{a.name}.md](docs/algorithms/{a.name}.md)"
        lines.append(
            f"| {a.name} | {a.role} | {a.status} | {a.provenance.replace('|', '/')} | {page} |"
        )
    return "\n".join(lines)


def algorithms_by_name() -> str:
    """The scenario reference's table: how a scenario names each algorithm, the bytes its
    congestion header adds to a packet, and its page (which has its parameters)."""
    names = registry_names()
    header_bytes = {
        name: 2 + length for _, name, length, _, _ in load_native().congestion_headers()
    }
    lines = [
        "| algorithm | role | in a scenario | header bytes | page |",
        "|---|---|---|---|---|",
    ]
    for a in algorithms():
        usage = [
            f'`{field} = {{ kind = "{a.name}", ... }}`'
            for field, role in (("cc", "host"), ("queue", "link"))
            if a.name in names[role]
        ]
        if not usage:
            usage = ["session protocol, not a scenario kind"]
        shim = f"{header_bytes[a.name]} B" if a.name in header_bytes else "-"
        page = f"[{a.name}.md](algorithms/{a.name}.md)"
        lines.append(f"| `{a.name}` | {a.role} | {', '.join(usage)} | {shim} | {page} |")
    return "\n".join(lines)


#: What `flows.kind` holds (not a registry: the traffic kinds of the scenario format; the
#: scenario-reference test checks the list against what runs write).
FLOW_KINDS = ("bulk", "cbr", "arrival", "request", "response", "session")


def enumerations() -> str:
    """output-schema.md's table of the values of the enumerated columns."""
    names = registry_names()

    def codes(values) -> str:
        return ", ".join(f"`{v}`" for v in values)

    return "\n".join(
        [
            "| column | values |",
            "|---|---|",
            f"| `flows.kind` | {codes(FLOW_KINDS)} |",
            f"| `flows.cc` | {codes(names['host'])} (the `cc` kinds), `none` (cbr), "
            f"{codes(names['session'])} (session flows' protocols) |",
            f"| `links.algorithm` | {codes(names['link'])} (the `queue` kinds) |",
        ]
    )


def _markdown(path: str, render: Callable[[], str]) -> Region:
    return Region(
        path, f"<!-- BEGIN GENERATED: {COMMAND}; do not edit -->", "<!-- END GENERATED -->", render
    )


REGIONS = (
    Region(
        "tools/wireshark/xcclab.lua",
        f"-- BEGIN GENERATED: {COMMAND} (xcc_core::wire's header registry); do not edit",
        "-- END GENERATED",
        dissector_headers,
    ),
    _markdown("README.md", status_table),
    _markdown("docs/scenario-format.md", algorithms_by_name),
    _markdown("docs/output-schema.md", enumerations),
)


def regenerate(region: Region, text: str) -> str:
    """``text`` with ``region`` replaced by what the registries give now."""
    start, stop = text.find(region.begin), text.find(region.end)
    if start < 0 or stop < start:
        raise ValueError(
            f"{region.path}: no generated region "
            f"(expected a line {region.begin!r} and a line {region.end!r})"
        )
    return text[:start] + region.begin + "\n" + region.render() + "\n" + text[stop:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=COMMAND, description="rewrite the generated regions of the docs and dissector"
    )
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    ap.add_argument(
        "--check", action="store_true", help="exit 1 if a region is stale, changing nothing"
    )
    args = ap.parse_args(argv)
    stale = []
    for region in REGIONS:
        path = args.root / region.path
        try:
            text = path.read_text()
            new = regenerate(region, text)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if new == text:
            continue
        stale.append(region.path)
        if not args.check:
            path.write_text(new)
    if args.check and stale:
        print(f"stale generated regions in {', '.join(stale)}: run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
