"""`hotspot diff`: same code or not, then each row's change tested against capture-to-capture noise."""

from hotspot._callable import make_callable

make_callable(__name__)  # `hotspot.diff(...)` is the Python API's (hotspot/api.py)
