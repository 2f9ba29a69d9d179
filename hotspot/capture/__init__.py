"""The capture layer: the only package that knows rocprofv3's output layouts and opens capture files.

Readers for the ATT ui_output dispatch dir (code.json, wave files, occupancy.json, realtime.json,
snapshots.json), the side files rocprofv3 writes beside it (agent info, kernel trace/stats CSVs,
rocpd and rocm-trace-lite databases, results.json), dispatch discovery and selection. Analyses
above this layer never open a file.
"""
