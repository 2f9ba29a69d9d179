"""Progress on stderr for long work: nothing for short work, plain lines in a log, a live line on a
terminal, never on stdout, never with --quiet."""

from __future__ import annotations

import json

import pytest

from hotspot import diagnostics
from hotspot.diagnostics import Progress


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _progress(monkeypatch, tty: bool) -> tuple[Progress, _Clock]:
    clock = _Clock()
    monkeypatch.setattr(diagnostics, "_stderr_is_tty", lambda: tty)
    monkeypatch.setattr("time.monotonic", clock)
    return Progress("reading wave files", 10, "files"), clock


def test_short_work_prints_nothing(monkeypatch, capsys) -> None:
    p, clock = _progress(monkeypatch, tty=False)
    for _ in range(10):
        clock.t += 0.05  # 0.5 s in all
        p.advance()
    p.close()
    assert capsys.readouterr() == ("", "")


def test_log_gets_periodic_plain_lines(monkeypatch, capsys) -> None:
    p, clock = _progress(monkeypatch, tty=False)
    for _ in range(10):
        clock.t += 2.0
        p.advance()
    p.close()
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == ""
    # first line after 1 s, then at most one per 5 s: 20 s of work -> 4 or 5 lines
    assert 3 <= len(lines) <= 5
    assert lines[0] == "reading wave files: 1/10 files (10%), 2 s"
    assert "\r" not in err


def test_terminal_gets_rich_live_bar_cleared_at_the_end(monkeypatch, capsys) -> None:
    p, clock = _progress(monkeypatch, tty=True)
    for _ in range(10):
        clock.t += 2.0
        p.advance()
    assert p._live is not None  # rich's progress display
    p.close()
    out, err = capsys.readouterr()
    assert out == ""
    assert "reading wave files" in err and "10/10" in err and "files" in err
    assert "\x1b[?25l" in err and "\x1b[?25h" in err  # cursor hidden, then restored
    assert err.endswith("\x1b[2K")  # transient: the bar's line is erased when the work ends


def test_terminal_without_rich_gets_one_live_line(monkeypatch, capsys) -> None:
    import builtins

    real_import = builtins.__import__

    def no_rich(name, *args, **kwargs):
        if name.startswith("rich"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rich)
    p, clock = _progress(monkeypatch, tty=True)
    for _ in range(10):
        clock.t += 2.0
        p.advance()
    p.close()
    out, err = capsys.readouterr()
    assert out == "" and "\n" not in err
    assert err.count("\r") == 11 and "10/10 files (100%)" in err and err.endswith("\r\x1b[K")


def test_quiet_silences_progress(monkeypatch, capsys) -> None:
    monkeypatch.setitem(diagnostics.QUIET, "on", True)
    p, clock = _progress(monkeypatch, tty=False)
    for _ in range(10):
        clock.t += 2.0
        p.advance()
    diagnostics.progress("phase started")
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("quiet", [False, True])
def test_analyze_reports_wave_files_on_stderr_only(tmp_path, cli, monkeypatch, quiet) -> None:
    from tests.test_diff import _waves_dispatch

    d = _waves_dispatch(tmp_path / "x" / "ui_output_agent_1_dispatch_1", 400, 8)
    monkeypatch.setattr(Progress, "FIRST_S", 0.0)
    monkeypatch.setattr(Progress, "LOG_EVERY_S", 0.0)
    run = cli("analyze", d, "--format", "json", *(["--quiet"] if quiet else []))
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["ok"] is True  # stdout is the one JSON document
    if quiet:
        assert "reading wave files" not in run.stderr
    else:
        assert "reading wave files: 8/8 files (100%)" in run.stderr


@pytest.mark.parametrize("quiet", [False, True])
def test_export_reports_waves_on_stderr_only(tmp_path, cli, monkeypatch, quiet) -> None:
    from tests.test_diff import _waves_dispatch

    d = _waves_dispatch(tmp_path / "x" / "ui_output_agent_1_dispatch_1", 400, 6)
    monkeypatch.setattr(Progress, "FIRST_S", 0.0)
    monkeypatch.setattr(Progress, "LOG_EVERY_S", 0.0)
    run = cli("export", "perfetto", d, "-o", tmp_path / "t.json", "--format", "json",
              *(["--quiet"] if quiet else []))
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["ok"] is True
    if quiet:
        assert "writing wave timelines" not in run.stderr
    else:
        assert "writing wave timelines: 6/6 waves (100%)" in run.stderr


def test_sweep_status_is_silent_under_quiet(monkeypatch, capsys, tmp_path) -> None:
    from hotspot.sweep.scheduler import Worker, WorkerOptions

    monkeypatch.setitem(diagnostics.QUIET, "on", False)
    from tests.sweep_support import new_manifest

    doc = new_manifest([("a", "pending"), ("b", "done")])
    worker = Worker.__new__(Worker)  # only the progress line is exercised
    worker.jobs, worker.elapsed, worker.tty = {}, [], False
    worker.opts = WorkerOptions.__new__(WorkerOptions)
    object.__setattr__(worker.opts, "gpus", [0])
    worker._say = lambda line: print(line, file=__import__("sys").stderr)
    worker._status(doc)
    assert "[sweep] 1 done" in capsys.readouterr().err
    monkeypatch.setitem(diagnostics.QUIET, "on", True)
    worker._status(doc)
    assert capsys.readouterr() == ("", "")
