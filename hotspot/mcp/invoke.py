"""Run one command in this process and keep the JSON document it prints (no child process): the
command's own click parsing, use case and serializer (hotspot/commands/_run.py), with the document
sent to a sink instead of stdout.

`Remembered` is the in-process layer above the result cache: the document of a call is kept with
the stat signature of every file and folder the call read; a repeat of the call whose inputs are
all unchanged is answered from memory, without opening a capture file (hotspot/cache/deps.py
records the reads, as for the CLI's output cache). A call that writes a file (report, export with
`force`) is answered from memory only while that file is still the one it wrote (same size, times
and inode): the command would write the same bytes there again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hotspot.cache import deps, store
from hotspot.errors import EXIT_INTERNAL, EXIT_USAGE
from hotspot.mcp.lru import Lru
from hotspot.result import dumps, error_envelope


@dataclass(frozen=True)
class Answer:
    document: bytes   # the JSON envelope, byte for byte what `hotspot ... --format json` prints
    exit_code: int    # what the command line would exit with
    remembered: bool = False  # answered by the in-process layer


def run_command(argv: list[str]) -> Answer:
    """`hotspot ARGV` (ending in `--format json`) run in-process; never raises but for an
    interrupt (KeyboardInterrupt reaches the command itself, which reports it)."""
    from hotspot.outfile import OUTPUT_SINK
    from hotspot.mcp.tool_schemas import click_command

    import typer

    try:
        from typer import _click as click
    except ImportError:  # pragma: no cover - typer releases that depend on click
        import click  # type: ignore[no-redef]  # typer releases that depend on click

    chunks: list[bytes] = []
    token = OUTPUT_SINK.set(chunks.append)
    try:
        try:
            code = click_command(argv[0]).main(args=argv[1:], prog_name=f"hotspot {argv[0]}",
                                               standalone_mode=False)
        except click.exceptions.UsageError as exc:
            return Answer(dumps(error_envelope(argv[0], "usage", EXIT_USAGE, exc.format_message(),
                                               f"see the {argv[0]} tool's input schema"),
                                pretty=False), EXIT_USAGE)
        except getattr(click.exceptions, "Exit", typer.Exit) as exc:  # typer's vendored click raises typer.Exit
            code = exc.exit_code
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    finally:
        OUTPUT_SINK.reset(token)
    document = b"".join(chunks)
    if not document:  # every command prints one document under --format json; a bug otherwise
        return Answer(dumps(error_envelope(argv[0], "internal-error", EXIT_INTERNAL,
                                           "the command printed no JSON document",
                                           "report it with the tool call's arguments"),
                            pretty=False), EXIT_INTERNAL)
    return Answer(document, code if isinstance(code, int) else 0)


@dataclass
class _Entry:
    answer: Answer
    paths: list[str]
    sigs: list[deps.Signature]
    listings: list[deps.Listing]
    outputs: list[str] = field(default_factory=list)   # files the call wrote, and their signatures
    output_sigs: list[deps.Signature] = field(default_factory=list)


def _answer_bytes(entry: _Entry) -> int:
    return len(entry.answer.document)


class Remembered:
    """Answers of successful calls, by command line, while nothing they read has changed."""

    def __init__(self, limit_bytes: int = 64 << 20) -> None:
        self._entries: Lru[tuple[str, ...], _Entry] = Lru(limit_bytes, _answer_bytes)

    def get(self, argv: list[str]) -> Answer | None:
        key = tuple(argv)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if not (deps.unchanged(entry.paths, entry.sigs) and deps.unchanged(entry.outputs, entry.output_sigs)
                and deps.listings_unchanged(entry.listings)):
            self._entries.pop(key)
            return None
        return Answer(entry.answer.document, entry.answer.exit_code, remembered=True)

    def run(self, argv: list[str], writes: bool = False) -> Answer:
        """The remembered answer, else run the command and remember a successful answer whose
        inputs were not being modified while it ran (deps.settled). `writes`: the call writes
        files (replacing them), kept with their signatures as they were written. With the cache
        off (HOTSPOT_CACHE=off) every call runs the command, as on the command line."""
        if store.disabled_reason():
            return run_command(argv)
        hit = self.get(argv)
        if hit is not None:
            return hit
        started = time.time_ns()
        with deps.recording() as read, deps.writes_recorded() as written:
            answer = run_command(argv)
        if answer.exit_code == 0:
            paths, listings = deps.split(read, deps.code_files())
            outputs = sorted(set(written)) if writes else []
            paths = [p for p in paths if p not in outputs]  # a file the call wrote is not its input
            sigs = deps.signatures(paths)
            if deps.settled(sigs, started):
                self._entries.put(tuple(argv), _Entry(answer, paths, sigs, listings, outputs, deps.signatures(outputs)))
        return answer

