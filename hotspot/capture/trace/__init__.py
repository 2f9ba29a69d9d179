"""Readers for kernel-level traces: rocprofv3 kernel stats/trace/marker CSVs, rocpd and
rocm-trace-lite SQLite databases, all yielding the typed records in records.py."""
