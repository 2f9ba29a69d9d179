"""Shared test helpers: the real-data corpus (skipped when absent) and an in-process CLI runner."""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

# The result cache (docs/cache.md) is off in tests, in this process and in the CLIs tests start:
# a test monkeypatches code or plants files and must see the analysis run. tests/test_cache.py
# turns it on with a cache folder of its own.
os.environ["HOTSPOT_CACHE"] = "off"

# The suite does not depend on the caller's terminal: a COLUMNS/LINES exported by the shell would
# make the CLI wrap text differently in this process and in the CLIs tests start (tests that are
# about the width set it themselves).
for _var in ("COLUMNS", "LINES"):
    os.environ.pop(_var, None)


def _default_signal_dispositions() -> None:
    """Run under `nohup` or as a background job, the runner starts with SIGHUP/SIGINT ignored, and
    every process a test starts inherits that: hotspot keeps an ignored signal ignored (as it
    should), so the signal tests would see no effect. Tests that want them ignored say so
    (preexec_fn); everything else starts from the defaults."""
    import signal

    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_default_signal_dispositions()


def pytest_collection_finish(session: pytest.Session) -> None:  # noqa: ARG001
    """Less cyclic garbage collection in the test process (each xdist worker runs this too): tests
    parse outputs of hundreds of thousands of JSON objects, and every collection scans the whole
    heap - the modules, strategies and parametrizations of ~1,800 collected tests included - for
    cycles that are not there (hotspot pauses the collector around its own parsing for the same
    reason: hotspot/gcpause.py). What is alive after collection is frozen out of the scans, and a
    collection runs after 50,000 net allocations instead of 700. Reference counting still frees
    everything at once; cycles are still collected, later."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (the README's test command) sends the tests of one `xdist_group` to one
    worker by reading the group from the test's id, `<nodeid>@<group>`. pytest-xdist (3.8) writes
    that id to `item._nodeid`, which pytest 9 no longer reads (the id is `item._id`): no test was
    grouped, and the Slurm tests, the text views and the browser module each ran their module
    fixtures (a cluster, a Chromium, the analyses) on both workers. The same id, where pytest 9
    reads it; nothing to do where xdist's own works."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9: xdist's own suffix is read
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = NodeId.parse(item.nodeid + suffix)


PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPUS = (PROJECT_ROOT / ".." / "shared" / "corpus").resolve()
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def corpus(request: pytest.FixtureRequest) -> Path:
    """The corpus folder; the test skips when there is none. When there is one, every corpus path
    among the test's parameters must exist: a capture the test names and the corpus lacks is a
    failure (a renamed or lost capture), not a skip."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS} (it lives beside the project in ../shared)")
    callspec = getattr(request.node, "callspec", None)
    for value in (callspec.params.values() if callspec is not None else ()):
        for path in _corpus_paths(value):
            if not path.exists():
                pytest.fail(f"{path}: this test names it but the corpus at {CORPUS} lacks it", pytrace=False)
    return CORPUS


def _corpus_paths(value: object) -> list[Path]:
    """The paths inside the corpus among a test parameter (a path, a string, or a list of them)."""
    if isinstance(value, (list, tuple)):
        return [p for item in value for p in _corpus_paths(item)]
    if isinstance(value, (str, Path)) and str(value).startswith(str(CORPUS) + os.sep):
        return [Path(value)]
    return []


@pytest.fixture(scope="session")
def _shared_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the whole run: under xdist the workers' temp folders share a parent, and the
    cache is safe for processes that use it at once (tests/test_cache.py
    test_concurrent_processes_share_one_cache), so a capture analysed on one worker is not analysed
    again on the other."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp("shared-cache")
    folder = tmp_path_factory.getbasetemp().parent / "shared-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def shared_analyses(_shared_cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The result cache on (docs/cache.md), in one folder for the whole session of this process:
    tests that run several commands over the same unchanged corpus capture (brief and full, analyze
    and plan) make its wave pass once, not once per command. Only for tests that neither patch
    hotspot's code nor change their inputs; tests/test_cache.py shows cached and fresh outputs are
    identical. Returns the cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(_shared_cache_home))
    monkeypatch.setenv("HOTSPOT_CACHE", "on")
    return _shared_cache_home / "hotspot"


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The result cache on, in a folder of this test's own (returned); what an earlier in-process
    command line's --no-cache or --quiet set for the process, and the once-only stale-code note,
    reset."""
    from hotspot.cache import deps, store
    from hotspot.diagnostics import QUIET

    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setenv(store.CACHE_ENV, "on")
    monkeypatch.delenv(store.MAX_MB_ENV, raising=False)
    monkeypatch.setattr(deps, "_said", {"stale code": False}, raising=False)
    monkeypatch.setitem(store.DISABLED, "on", False)
    monkeypatch.setitem(QUIET, "on", False)
    return home / "hotspot"


@pytest.fixture(autouse=True)
def _own_sweep_locks(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's sweeps take their device locks in a folder of the test's own
    (hotspot/collect/device_lock.py lock_folder): tests running at once in parallel workers never
    wait on each other's locks. Created only when a sweep takes a lock."""
    folder = tmp_path_factory.getbasetemp() / "locks" / str(abs(hash(request.node.nodeid)))
    monkeypatch.setenv("HOTSPOT_LOCK_DIR", str(folder))


def corpus_path(*parts: str) -> Path:
    """A corpus path for parametrization; tests using it must also request the `corpus` fixture."""
    return CORPUS.joinpath(*parts)


@dataclass
class CliRun:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return orjson.loads(self.stdout)


class _Tty(io.StringIO):
    def isatty(self) -> bool:  # pragma: no cover - trivial
        return False


def run_cli(*args: str) -> CliRun:
    """Run `hotspot ARGS` in-process; stdout and stderr captured separately."""
    from hotspot.cli import main

    out, err = _Tty(), _Tty()
    out.buffer = _BytesProxy(out)  # type: ignore[attr-defined]
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return CliRun(code, out.getvalue(), err.getvalue())


class _BytesProxy:
    def __init__(self, text: io.StringIO) -> None:
        self._text = text

    def write(self, data: bytes) -> int:
        return self._text.write(data.decode("utf-8"))

    def flush(self) -> None:
        pass


@pytest.fixture
def cli():
    return run_cli


def pytest_report_header(config):  # noqa: ARG001
    state = "present" if CORPUS.is_dir() else "absent (corpus tests skip)"
    return f"hotspot corpus: {CORPUS} {state}; python {sys.version.split()[0]}"
