"""What is stored and how: the database and its connections, tenant-scoped records and their writes
by source_id, row counts, tombstones of erased records, tenants and keys, and domain events."""
