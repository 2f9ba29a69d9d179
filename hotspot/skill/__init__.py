"""The packaged agent skill (hotspot/skill/hotspot/) and its installer."""
