"""`hotspot diff`: same code or not, then each row's change tested against capture-to-capture noise."""
