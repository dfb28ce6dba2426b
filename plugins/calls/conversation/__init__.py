"""A screening call's dialogue: the deterministic dialogue manager, the model-driven agent, and the
record they keep."""
