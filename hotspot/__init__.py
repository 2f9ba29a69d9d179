"""hotspot: which instruction is waiting, for what, and what to change (AMD CDNA ATT analysis).

As a library: `hotspot.analyze(path, plan=True)`, `hotspot.diff(before, after)` and
`hotspot.pmc(paths)` return the commands' typed results (docs/python-api.md). They are loaded on
first use: `import hotspot`, and so the command line's start, pays nothing for them.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a cached replay never needs it)

from time import time_ns as _time_ns

# when this process first loaded hotspot: the code it runs was read from disk after this (the
# result cache stores nothing computed by code edited since: hotspot/cache/deps.py)
LOADED_NS = _time_ns()

from hotspot._version import __version__  # noqa: E402

__all__ = ["__version__", "analyze", "diff", "pmc"]
API = "hotspot.api"  # the Python API's module (docs/python-api.md)

if not TYPE_CHECKING:
    # hidden from type checkers: a package-level __getattr__ would make them read every
    # `hotspot.x` they cannot resolve as this function's answer (typed code imports the
    # functions from hotspot.api)
    def __getattr__(name: str) -> object:
        import importlib

        if name == "analyze":
            # the package (layer 0) reaches the API (layer 9, docs/architecture.md) by name on
            # first use: the facade's one upward edge, never taken by the command line
            return importlib.import_module(API).analyze
        if name in ("diff", "pmc"):  # callable packages (hotspot/_callable.py)
            return importlib.import_module(f"hotspot.{name}")
        raise AttributeError(f"module 'hotspot' has no attribute {name!r}")
