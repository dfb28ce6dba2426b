"""Drills on real processes across hosts in network namespaces (tests/drills/scale_out.py)."""
