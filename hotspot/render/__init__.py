"""Renderers: turn a Result into text, markdown or HTML. They never compute analysis values."""
