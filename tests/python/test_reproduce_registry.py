"""The reproductions' registry: experiments by paper, variants that register themselves, and
the report templates' environment."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from xcclab.reproduce import Experiment, Variant, collect, experiments


def _run(out_dir, quick=False, **_kw) -> Path:
    return Path(out_dir)


def _experiment(id: str, **kw) -> Experiment:
    return Experiment(id, "000", id, "a claim", _run, lambda m: [], **kw)


def _module(name: str, **values) -> types.ModuleType:
    m = types.ModuleType(name)
    vars(m).update(values)
    return m


def test_a_variant_is_attached_to_its_experiment():
    e = _experiment("x")
    emu = Variant("x", "emu", _run)
    (got,) = collect([_module("a", E=e), _module("b", V=emu)])
    assert got.emu is _run and got.stack is None and got.id == "x"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"V": Variant("nope", "emu", _run)}, "no such experiment"),
        ({"V": Variant("x", "stack", _run), "W": Variant("x", "stack", _run)}, "two stack"),
        ({"E2": _experiment("x")}, "defined twice"),
    ],
)
def test_a_wrong_registration_is_an_error(values, message):
    with pytest.raises(RuntimeError, match=message):
        collect([_module("a", E=_experiment("x")), _module("b", **values)])


def test_an_experiment_cannot_set_a_variant_itself_and_in_a_module():
    e = _experiment("x", emu=_run)
    with pytest.raises(RuntimeError, match="sets emu itself and in a variant"):
        collect([_module("a", E=e), _module("b", V=Variant("x", "emu", _run))])


#: The paper (seed) of each family subpackage.
FAMILIES = {
    "maxnet": "000",
    "mice": "001",
    "xcc": "002",
    "markmax": "003",
    "slbn": "004",
    "baselines": "beyond",
}


def test_every_experiment_lives_in_its_papers_family():
    ids = set()
    for e in experiments():
        module = sys.modules[e.run.__module__]
        family = module.__name__.split(".")[2]
        assert FAMILIES.get(family) == e.seed, (e.id, module.__name__)
        ids.add(e.id)
    assert len(ids) == len(experiments())


def test_the_variants_of_today_are_registered():
    by_id = {e.id: e for e in experiments()}
    assert {i for i, e in by_id.items() if e.emu} >= {
        "xcc-dumbbell-3",
        "xcc-rtt-fairness",
        "mice-http-50",
        "mice-http-200",
        "markmax-s1",
    }
    assert {i for i, e in by_id.items() if e.stack} == {
        "maxnet-cbr",
        "maxnet-two-link",
        "mice-http-50",
        "mice-http-200",
    }


def test_templates_fail_on_an_undefined_name_and_escape_html_as_html_escape():
    import jinja2

    from xcclab.reproduce.common.templates import environment

    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ missing }}").render()
    html = environment(html=True).from_string("<p>{{ x }}</p>").render(x="RCP's <b>&\"")
    assert html == "<p>RCP&#x27;s &lt;b&gt;&amp;&quot;</p>"


def test_the_transport_sizes_are_read_from_the_scenario_parser_and_the_registry():
    """``explicit.MSS``/``HEADERS`` are the parser's transport defaults and the on-wire MaxNet
    sizes follow from the registry's shim; the values the committed reports were measured with
    are pinned here, so a change of a default shows up as this failure, not as silently
    different runs."""
    from xcclab.references import shim_bytes
    from xcclab.reproduce.common import explicit, stacks
    from xcclab.reproduce.mice import mice

    assert (explicit.MSS, explicit.HEADERS) == (1460, 40)
    assert shim_bytes()["maxnet"] == 8
    assert mice.MAXNET_TRANSPORT == {"mss": "1432B", "header": "68B"}
    assert stacks.UDP_MSS == "1432B"
    for p in explicit.PROTOCOLS:
        wire = p.on_wire()
        assert wire.mss + wire.headers + wire.shim_bytes == explicit.WIRE_PACKET_BYTES, p.name
