"""ATT analyses over one dispatch as the capture layer read it: classification (classify.py),
aggregation, the wave-pass engine (engine/), wait attribution (waits/), wave states, loops,
barriers, occupancy, findings, and the `analyze` use case (analyze.py)."""
