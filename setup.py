"""Build the optional native wave scanner (hotspot/att/engine/_wavescan.c).

`optional=True`: without a C compiler the install still succeeds and hotspot parses wave files in
Python (same results, slower); `hotspot doctor` reports which one is in use.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("hotspot.att.engine._wavescan", ["hotspot/att/engine/_wavescan.c"], optional=True)])
