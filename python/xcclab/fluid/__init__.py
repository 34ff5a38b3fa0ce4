"""Fluid models of the papers' algorithms: MarkMax (exact, event-driven) and MaxNet (delay
differential equations, time-stepped)."""

from .markmax import FluidResult, MarkMaxFluid
from .maxnet import MaxNetFluidParams, MaxNetFluidResult

__all__ = ["FluidResult", "MarkMaxFluid", "MaxNetFluidParams", "MaxNetFluidResult"]
