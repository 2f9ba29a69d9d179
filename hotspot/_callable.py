"""`hotspot.diff(a, b)` and `hotspot.pmc(paths)` are functions of the Python API (hotspot/api.py),
and hotspot.diff and hotspot.pmc are packages too: once a package is imported, Python binds its
name on `hotspot` to the package. Those packages are made callable, so `hotspot.diff(...)` runs the
API function whether or not the package was loaded first, and `hotspot.diff.api` stays a module."""

from __future__ import annotations

import sys
import types
from typing import Any


class CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import importlib

        from hotspot import API  # reached by name, as hotspot/__init__.py does (an upward edge)

        function = getattr(importlib.import_module(API), self.__name__.rsplit(".", 1)[1])
        return function(*args, **kwargs)


def make_callable(package: str) -> None:
    sys.modules[package].__class__ = CallablePackage
