"""The package version, in a module of its own: `python -m hotspot` run from a folder that holds a
directory named `hotspot` (the clone's parent folder) imports that directory as the package
namespace, without hotspot/__init__.py; submodules, this one included, still resolve."""

__version__ = "0.1.0"
