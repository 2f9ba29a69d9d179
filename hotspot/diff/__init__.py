"""`hotspot diff`: compare two analyses of a kernel with a noise floor."""
