"""Seed 000, MaxNet: the two-link and CBR runs (each with its Linux-stack variant, ``*_stacks``),
the stability and price-encoding calculators, and RCP's unstable network (Figs 12-16)."""
