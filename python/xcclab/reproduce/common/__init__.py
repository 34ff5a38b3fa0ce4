"""Helpers every family of reproductions shares: comparisons and ``metrics.json`` (``report``),
the paper's claims as table points (``paper_claims``), seeded runs (``seeds``), the explicit
protocols as the experiments run them (``explicit``) and the tables that put a simulated run
beside a real stack's (``stacks``). Nothing here is an experiment."""
