"""Seed 003, MarkMax: the fluid model, the packet-level sets S1-S3 (``packet`` holds their
shared dumbbell) and the real-packet variant of S1 (``markmax_s1_emu``)."""
