"""Beyond the papers: CUBIC and BBR, the simulator's beside Linux's own."""
