"""Optimization plan: data-driven rules over the plain JSON of `hotspot analyze` (see docs/plan-rules.md)."""
