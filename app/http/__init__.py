"""The HTTP surface every family shares: the Api and its Blueprint, request bodies and their bounds,
JSON, fields, lists and cursors, answers built once per row, the record, upsert and batch routes,
idempotency, health and metrics."""
