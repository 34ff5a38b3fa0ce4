"""Fluid models of the papers' algorithms (exact, event-driven; no time stepping)."""

from .markmax import FluidResult, MarkMaxFluid

__all__ = ["FluidResult", "MarkMaxFluid"]
