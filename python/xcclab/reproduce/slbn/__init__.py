"""Seed 004, SLBN: the four WAN experiments on the packet engine (``slbn_packets``), with the
session driver beside them as a validated approximation (``slbn_validation``)."""
