"""Counter inputs (`hotspot pmc`): rocprofv3 counter collection CSVs, rocprof-compute pmc_perf.csv,
rocpd databases, and the side files beside them (sysinfo.csv, roofline.csv, agent info), read into
the typed CounterFile model (model.py); pmc/ analyses them."""
