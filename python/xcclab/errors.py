"""Exceptions raised by xcclab.

The native module raises plain ``ValueError`` for bad scenarios and ``RuntimeError`` for runs
that break an invariant; the Python layer keeps those types (so ``except ValueError`` works
the same for both) and adds subclasses for errors it detects itself.
"""

from __future__ import annotations


class XccError(Exception):
    """Base class of the errors raised by the Python layer of xcclab."""


class ScenarioError(XccError, ValueError):
    """A scenario (or another input such as a run directory) is invalid or unreadable."""


class RunFailure(XccError, RuntimeError):
    """A simulation or an experiment failed while running."""


class NativeModuleMissing(XccError, ImportError):
    """The compiled simulator ``xcclab._native`` is not built or cannot be imported."""


def load_native():
    """Import and return :mod:`xcclab._native`, with an actionable message if it is missing."""
    try:
        from . import _native
    except ImportError as exc:
        raise NativeModuleMissing(
            "the simulator module xcclab._native is not built "
            f"({exc}); build it with `make build` (or `maturin develop --release`)"
        ) from exc
    return _native
