"""ATT ui_output analysis: readers (code.json, waves, snapshots, occupancy), classification,
aggregation and findings for one dispatch."""
