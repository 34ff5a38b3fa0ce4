"""Seed 001, MaxNet against Reno/RED with HTTP mice: the simulated runs and their real-packet
(``mice_emu``) and Linux-stack (``mice_stacks``) variants."""
