"""`hotspot sweep`: a whole kernel library profiled across GPUs and nodes (see api.py)."""
