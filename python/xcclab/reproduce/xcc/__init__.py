"""Seed 002, the explicit protocols compared (XCP, JetMax, RCP, PIQI-RCP, MaxNet): the simulated
experiments, and the real-packet variants of two of them (``*_emu``, on ``emu_common``)."""
