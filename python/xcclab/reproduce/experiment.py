"""The one shape of a reproduction: an :class:`Experiment` object, and the :class:`Variant`
objects that run it on another engine.

An experiment module builds one (or several, for a family such as ``rcp-instability-N``)
``Experiment`` at import; a variant module (``*_emu``: on real packets, ``*_stacks``: on
Linux's stacks) builds a ``Variant`` naming the experiment's id. :mod:`xcclab.reproduce`
discovers both by importing every module of its family subpackages and collecting the
instances they hold, then gives each experiment its variants: the experiment module never
imports its variants, the variant imports the experiment's helpers. Nothing is probed by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..claims import Claim

#: run(out_dir, quick=False, *, log=None, progress=True) -> path of report.md
Runner = Callable[..., Path]


@dataclass(frozen=True)
class Experiment:
    """A paper experiment: what it is, how to run it, what the paper claims.

    ``run`` writes ``report.md``, ``metrics.json`` and figures into its directory; ``claims``
    reads that ``metrics.json`` and returns the paper's claims with our measured values (the
    report's claim table and the verdict come from them, :mod:`xcclab.reproduce.verdicts`).
    ``emu`` (``xcc reproduce ID --emu``: simulated and on real packets), ``stack``
    (``--stack kernel|udp``: run(out_dir, quick, *, stack, log)) and ``scenarios``
    (``--write-scenarios DIR``: write the experiment's scenario files, return their paths) are
    optional. ``approximation``: says so where the results come from a labelled approximation
    rather than the engine the others use (``xcc list`` prints it after the title).
    """

    id: str
    seed: str  # the paper: "000" .. "004" (/work/shared/seeds)
    title: str
    summary: str  # the paper's claim in one line, for the index
    run: Runner
    claims: Callable[[dict[str, Any]], list[Claim]]
    emu: Runner | None = None
    stack: Runner | None = None
    scenarios: Callable[[str | Path], list[Path]] | None = None
    approximation: str = ""


#: The kinds of variant: ``emu`` is ``xcc reproduce ID --emu``, ``stack`` is ``--stack kernel|udp``.
VariantKind = Literal["emu", "stack"]


@dataclass(frozen=True)
class Variant:
    """Experiment ``experiment``'s run on another engine, defined in its own module.

    ``kind`` ``"emu"``: ``run(out_dir, quick, *, log)`` runs the experiment simulated and on
    real packets; ``"stack"``: ``run(out_dir, quick, *, stack, log)`` on Linux's stacks. The
    registry sets the experiment's ``emu`` or ``stack`` field to ``run``; an id that names no
    experiment, or two variants of one kind for one experiment, is an error at discovery.
    """

    experiment: str
    kind: VariantKind
    run: Runner
