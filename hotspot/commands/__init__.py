"""Thin CLI adapters, one module per command: parse options, call one use case, render, map errors.

Modules here import only typer and the standard library at import time so that `hotspot --help`
stays fast; analysis code is imported inside the command body.
"""
