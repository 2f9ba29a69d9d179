"""Benchmark support for scripts/bench.py: timing whole processes, cached synthetic inputs, the
speed/memory targets of issue 9 and the report. Lives beside the script (not in the package): the CLI never needs it."""
