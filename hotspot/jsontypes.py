"""JSON as Python holds it: what orjson reads and what plain-data sections (saved results, rocprofv3
documents, evidence maps, error details) are made of. A leaf module, so that errors.py and result.py
can both name these types without importing each other."""

from __future__ import annotations

from typing import Union

JsonValue = Union[None, bool, int, float, str, list["JsonValue"], dict[str, "JsonValue"]]
JsonObject = dict[str, JsonValue]
