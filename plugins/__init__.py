"""Endpoint families, one package each, exposing PLUGIN (see app/plugins.py)."""
