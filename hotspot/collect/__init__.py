"""Collection: drive rocprofv3 (discovery, ATT, counters) into a run directory the analyses read."""
