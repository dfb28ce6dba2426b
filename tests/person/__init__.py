"""Tests of the person family (search, enrichment, datasets)."""
