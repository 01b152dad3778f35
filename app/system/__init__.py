"""The service looking after itself: health and meta routes, its own state table, schema
migrations and the seed under a lock, the ORM registry, and child-process lifetimes."""
