"""Outputs meant for eyes and other tools: the HTML report data and the Perfetto trace."""
