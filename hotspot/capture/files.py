"""Opening capture files: every read of an input file goes through here, so that size caps and
failures (missing, directory, permission) are handled once and always name the file."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from hotspot.capture.session import kept_bytes, remember_bytes
from hotspot.errors import InputError, bad_file
from hotspot.result import JsonValue


def load_json(path: Path, max_bytes: int | None = None) -> JsonValue:
    """Read and parse one JSON file; every failure names the file."""
    return parse_json(path, read_capped(path, max_bytes))


def read_capped(path: Path | str, max_bytes: int | None = None) -> bytes:
    """The bytes of one input file, refused when over `max_bytes`; every failure names the file.
    Plain os calls (`path` may be a str): the wave pass reads ~50,000 files on a large capture.
    Within a capture session, bytes another step asked to keep are served without a second read."""
    kept = kept_bytes(os.fspath(path))
    if kept is not None:
        return kept
    data = _read_capped(path, max_bytes)
    remember_bytes(os.fspath(path), data)
    return data


def _read_capped(path: Path | str, max_bytes: int | None) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            if max_bytes is not None and size > max_bytes:
                raise _too_large(path, size, max_bytes)
            data = os.read(fd, size + 1)
            if len(data) != size:  # the file changed size, or a short read: read to the end
                parts = [data]
                while parts[-1]:
                    parts.append(os.read(fd, 1 << 20))
                data = b"".join(parts)
                if max_bytes is not None and len(data) > max_bytes:
                    raise _too_large(path, len(data), max_bytes)
            return data
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise bad_file(Path(path), "file not found",
                       "pass an ATT ui_output_agent_*_dispatch_* directory")
    except IsADirectoryError:
        raise bad_file(Path(path), "is a directory, expected a JSON file")
    except PermissionError:
        raise bad_file(Path(path), "permission denied")


def _too_large(path: Path | str, size: int, max_bytes: int) -> InputError:
    return bad_file(Path(path), f"file is {size:,} bytes, over the {max_bytes:,}-byte limit",
                    "raise the limit with --max-file-mb if this file is expected",
                    code="file-too-large")


def parse_json(path: Path, data: bytes) -> JsonValue:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise bad_file(path, f"malformed JSON ({exc})",
                       "the file may be truncated; re-run the decoder or re-capture",
                       code="malformed-json")
