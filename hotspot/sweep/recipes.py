"""The recipes file of `hotspot sweep`: what to profile, one entry per kernel/benchmark.

Either a YAML list of entries, or a mapping with `defaults` (merged under every entry), `entries`
and `slurm` (`prelude`: shell lines the Slurm script runs before hotspot, e.g. module loads).
Everything is validated before anything runs, and every problem is reported at once with the entry,
the field and the fix.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shlex
from dataclasses import asdict, replace
from datetime import date
from pathlib import Path
from typing import Any, cast

import orjson

from hotspot.errors import InputError
from hotspot.record import record
from hotspot.sweep.manifest import read_regular
from hotspot.sweep_records import AttSettings, Recipe

ATT_FIELDS = ("target_cu", "buffer_size", "simd_select", "shader_engine_mask")
# A week: longer than any job's time limit; nan and inf are not a timeout.
MAX_TIMEOUT_S = 7 * 24 * 3600.0
# A recipes file is a few KB per entry; read at most this much, nest at most this deep.
MAX_RECIPES_BYTES = 16 << 20
MAX_DEPTH = 32
# Values (scalars, lists, maps) the file may hold once its aliases are expanded: a thousand entries
# of a few dozen values each is far below; a "billion laughs" alias bomb (a few lines expanding to
# 10^9 values), or a file of that many plain values, is refused while its YAML events are walked,
# before any value is built: the walk to this many takes ~0.3 s on a busy 2-core machine.
MAX_VALUES = 100_000
# A problem line on stderr stays readable: at most this many characters (values and paths inside it
# are shortened; the JSON document's error.details.problems hold them whole).
MAX_LINE = 200
# The sweep pins every entry to its GPU through these; a recipe must not override them.
PINNING_VARS = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# What yaml.safe_load gives: scalars (dates and !!binary bytes among them), lists, maps and !!set sets.
YamlValue = None | bool | int | float | str | bytes | date | list[Any] | dict[Any, Any] | set[Any]


@record
class Field:
    """One field of an entry: what it holds, what it is when neither the entry nor `defaults` gives
    it, what that means, and the fix every problem with it shows (so the fix is one look away)."""
    name: str
    type: str
    default: YamlValue
    missing: str
    fix: str


FIELDS = (
    Field("name", "str", None, "an error: every entry is named",
          "a unique, file-name safe name: letters, digits, '.', '_' or '-' (e.g. gemm_bf16)"),
    Field("cmd", "list of str, or one str", None, "an error: every entry runs a command",
          "an argument list (cmd: [python, bench.py, --m, '4096']) or one string split like a shell "
          "would, without running one"),
    Field("cwd", "str", ".", "the recipes file's directory",
          "a directory path (relative paths are relative to the recipes file)"),
    Field("env", "map of str", {}, "no variables added to the sweep's environment",
          "a map of NAME: value (e.g. env: {HIP_FORCE_DEV_KERNARG: '1'})"),
    Field("kernel", "str (regex)", None, "discovery chooses the kernel",
          "a Python regex matching the kernel name (omit it to let discovery choose)"),
    Field("iterations", "str", None, "discovery chooses the iterations",
          "a set of 1-based iterations such as 12-13 or 3,5-7"),
    Field("pmc", "list of str, or one str", [], "no counters",
          "a list of counter names (e.g. [TCC_HIT_sum, TCC_MISS_sum])"),
    Field("att", "map of int", {}, "the ATT defaults (target_cu 1, masks 0x1 and 0xF, 256M buffer)",
          f"a map with any of {', '.join(ATT_FIELDS)} (integers, 0x-hex, or sizes like 512M)"),
    Field("timeout_s", "number", None, "no timeout",
          "a positive number of seconds (e.g. timeout_s: 900)"),
    Field("tags", "list of str", [], "no tags", "a list of short strings (e.g. tags: [gemm, bf16])"),
)
ENTRY_FIELDS = tuple(f.name for f in FIELDS)
DEFAULT_FIELDS = tuple(f for f in ENTRY_FIELDS if f != "name")
TOP_FIELDS = ("defaults", "entries", "slurm")
MERGED_MAPS = ("env", "att")  # merged with `defaults`, the entry's own keys winning


def _fix(field: str) -> str:
    """The fix of `field` (or of the entry field `env.X` names), "" for what is no entry field."""
    head = field.split(".")[0]
    return next((f.fix for f in FIELDS if f.name == head), "")


@record
class Problem:
    entry: str  # entry name, or "#3" when it has none, or "(file)"
    field: str
    problem: str
    fix: str

    def line(self, width: int = MAX_LINE) -> str:
        """One line of at most `width` characters: the entry label and field shortened in their
        middle, a path in the problem from its left (its end stays), then the problem at a word."""
        from hotspot.render.tables import shorten_left, shorten_middle, shorten_words

        entry, field = shorten_middle(self.entry, 40), shorten_middle(self.field, 40)
        fix = shorten_words(self.fix, 130)
        frame = f"entry {entry}: {field}:  (fix: {fix})"
        problem = self.problem
        room = max(20, width - len(frame))
        if len(problem) > room:
            problem = " ".join(shorten_left(w, 60) if "/" in w and len(w) > 60 else w for w in problem.split(" "))
        if len(problem) > room:
            problem = shorten_words(problem, room)
        return f"entry {entry}: {field}: {problem} (fix: {fix})"


@record
class Entry:
    name: str
    cmd: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...] = ()
    kernel: str | None = None
    iterations: str | None = None
    pmc: tuple[str, ...] = ()
    target_cu: int = 1
    shader_engine_mask: int = 0x1
    simd_select: int = 0xF
    buffer_size: int = 0x10000000
    timeout_s: float | None = None
    tags: tuple[str, ...] = ()

    def recipe(self) -> Recipe:
        """The entry as the manifest and the job spec hold it."""
        return Recipe(self.name, list(self.cmd), self.cwd, dict(self.env), self.kernel, self.iterations,
                      list(self.pmc), AttSettings(self.target_cu, self.shader_engine_mask, self.simd_select,
                                                  self.buffer_size), self.timeout_s, list(self.tags))

    @classmethod
    def from_recipe(cls, r: Recipe) -> "Entry":
        a = r.att
        return cls(name=r.name, cmd=tuple(r.cmd), cwd=r.cwd, env=tuple(sorted(r.env.items())), kernel=r.kernel,
                   iterations=r.iterations, pmc=tuple(r.pmc), target_cu=a.target_cu,
                   shader_engine_mask=a.shader_engine_mask, simd_select=a.simd_select, buffer_size=a.buffer_size,
                   timeout_s=r.timeout_s, tags=tuple(r.tags))

    def sha256(self) -> str:
        """What the entry asks for; a changed hash means a changed recipe (tags excluded: they label)."""
        data = asdict(self.recipe())
        data.pop("tags")
        return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


@record
class Recipes:
    path: Path
    entries: tuple[Entry, ...]
    slurm_prelude: str
    sha256: str  # of the file's bytes

    def by_name(self) -> dict[str, Entry]:
        return {e.name: e for e in self.entries}


def att_limits() -> dict[str, int]:
    """Largest value each att field can mean: a CU id below the most CUs any product has, a SIMD
    mask over a CU's SIMDs (hotspot/arch tables); masks and sizes within the 64 bits rocprofv3's
    options and the manifest's JSON hold."""
    from hotspot.arch.products import PRODUCTS
    from hotspot.arch.targets import TARGETS

    simds = max(int(t.simds_per_cu) for t in TARGETS.values())
    return {"target_cu": max(p.cus for p in PRODUCTS.values()) - 1, "simd_select": (1 << simds) - 1,
            "shader_engine_mask": (1 << 64) - 1, "buffer_size": (1 << 63) - 1}


def valid_timeout(value: object) -> bool:
    """A finite, positive number of seconds no larger than MAX_TIMEOUT_S (nan and inf are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return 0 < float(value) <= MAX_TIMEOUT_S  # nan compares false; huge ints overflow float
    except OverflowError:
        return False


def _short(value: object, width: int = 80) -> str:
    """A value for a message: its repr, cut so a 10,000-digit number stays one readable line."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 4000 else f"a {value.bit_length()}-bit number"
    return text if len(text) <= width else text[:width - 3] + "..."


def _int(value: object, *, size: bool = False) -> int:
    from hotspot.collect.api import parse_int, parse_size

    if isinstance(value, bool):
        raise ValueError("a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("negative")
        return value
    text = str(value)
    try:
        return parse_size(text, "x") if size else parse_int(text, "x")
    except Exception as exc:  # UsageError: re-worded by the caller
        raise ValueError(f"{_short(value)} is not {'a size' if size else 'an integer'}") from exc


@record
class Given:
    """An entry (or `defaults`) as the file gives it, decoded once from the YAML map: one attribute per
    entry field holding the YAML value unchecked (None where absent: `present` tells an explicit null
    from an absent field), and the keys that are no entry field. `_entry` checks it into an Entry."""
    name: YamlValue = None
    cmd: YamlValue = None
    cwd: YamlValue = None
    env: YamlValue = None
    kernel: YamlValue = None
    iterations: YamlValue = None
    pmc: YamlValue = None
    att: YamlValue = None
    timeout_s: YamlValue = None
    tags: YamlValue = None
    present: tuple[str, ...] = ()  # the entry fields the file gives, in its order
    unknown: tuple[str, ...] = ()  # the keys that are no entry field, in the file's order

    @classmethod
    def read(cls, raw: dict[Any, Any]) -> "Given":
        known = {str(k): v for k, v in raw.items() if k in ENTRY_FIELDS}
        return replace(cls(present=tuple(known), unknown=tuple(str(k) for k in raw if k not in ENTRY_FIELDS)),
                       **known)

    def without(self, fields: set[str]) -> "Given":
        """These fields left out (as if the file did not give them)."""
        kept = tuple(f for f in self.present if f not in fields)
        return replace(Given(present=kept, unknown=self.unknown), **{f: getattr(self, f) for f in kept})

    def under(self, defaults: "Given") -> "Given":
        """Every field once: the entry's own, else `defaults`', else the field's default; env and att
        maps given by both merge, the entry's own keys winning."""
        values: dict[str, Any] = {}  # YamlValue each, as the fields
        for f in FIELDS:
            mine, theirs = getattr(self, f.name), getattr(defaults, f.name)
            if f.name in MERGED_MAPS and isinstance(mine, dict) and isinstance(theirs, dict):
                values[f.name] = {**theirs, **mine}
            elif f.name in self.present:
                values[f.name] = mine
            elif f.name in defaults.present:
                values[f.name] = theirs
            else:
                values[f.name] = copy.copy(f.default)
        return replace(Given(present=ENTRY_FIELDS, unknown=self.unknown), **values)


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, entry: str, field: str, problem: str, fix: str | None = None) -> None:
        self.problems.append(Problem(entry, field, problem, fix or _fix(field)))


def _entry(raw: Given, defaults: Given, label: str, base: Path, chk: _Checker,
           required: bool = True) -> Entry | None:
    merged = raw.under(defaults)  # every field once: the checks below read this, never `raw` again
    ok = True

    def bad(field: str, problem: str, fix: str | None = None) -> None:
        nonlocal ok
        ok = False
        chk.add(label, field, problem, fix)

    for key in raw.unknown:
        bad(key, "unknown field", f"use only {', '.join(ENTRY_FIELDS)}")
    name = merged.name
    if required and (not isinstance(name, str) or not NAME_RE.fullmatch(name)):
        bad("name", "missing" if name is None else f"{_short(name, 40)} is not file-name safe")
    cmd_raw = merged.cmd
    cmd: tuple[str, ...] = ()
    if isinstance(cmd_raw, str):
        try:
            cmd = tuple(shlex.split(cmd_raw))
        except ValueError as exc:
            bad("cmd", f"cannot be split: {exc}")
    elif isinstance(cmd_raw, list) and all(isinstance(a, (str, int, float)) and not isinstance(a, bool)
                                           for a in cmd_raw):
        cmd = tuple(str(a) for a in cmd_raw)
    elif cmd_raw is not None:
        bad("cmd", f"is a {type(cmd_raw).__name__}")
    if not cmd and (cmd_raw == [] or (isinstance(cmd_raw, str) and not cmd_raw.strip())
                    or (cmd_raw is None and required)):
        bad("cmd", "missing or empty")
    cwd_raw = merged.cwd
    cwd = base
    if not isinstance(cwd_raw, str):
        bad("cwd", f"is a {type(cwd_raw).__name__}")
    else:
        cwd = (base / Path(cwd_raw).expanduser()).resolve()
        if not cwd.is_dir():
            bad("cwd", f"{cwd} is not a directory", "create it, or fix the path")
    env: dict[str, str] = {}
    env_raw = merged.env
    if not isinstance(env_raw, dict):
        bad("env", f"is a {type(env_raw).__name__}")
    else:
        for k, v in env_raw.items():
            if not isinstance(k, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                bad("env", f"{k!r} is not a variable name")
            elif k in PINNING_VARS:
                bad(f"env.{k}", "is set by the sweep (each entry is pinned to its GPU)",
                    "remove it; choose GPUs with hotspot sweep --gpus")
            elif isinstance(v, (dict, list)) or v is None:
                bad(f"env.{k}", "must be a scalar value", _fix("env"))
            else:
                env[k] = str(v).lower() if isinstance(v, bool) else str(v)
    kernel = merged.kernel
    if kernel is not None:
        if not isinstance(kernel, str):
            bad("kernel", f"is a {type(kernel).__name__}")
        else:
            try:
                re.compile(kernel)
            except re.error as exc:
                bad("kernel", f"{kernel!r} is not a valid regex: {exc}")
    iterations = merged.iterations
    if iterations is not None:
        from hotspot.collect.iterations import parse_spec

        iterations = str(iterations)
        try:
            parse_spec(iterations)
        except Exception as exc:  # UsageError with its own wording
            bad("iterations", getattr(exc, "message", str(exc)))
    pmc_raw = merged.pmc
    pmc: tuple[str, ...] = ()
    if isinstance(pmc_raw, str):
        pmc = tuple(p for p in re.split(r"[,\s]+", pmc_raw) if p)
    elif isinstance(pmc_raw, list) and all(isinstance(p, str) for p in pmc_raw):
        pmc = tuple(pmc_raw)
    else:
        bad("pmc", f"is a {type(pmc_raw).__name__} of mixed items")
    limits = att_limits()
    att_raw = merged.att
    att = {"target_cu": 1, "shader_engine_mask": 0x1, "simd_select": 0xF, "buffer_size": 0x10000000}
    if not isinstance(att_raw, dict):
        bad("att", f"is a {type(att_raw).__name__}")
    else:
        for k, v in att_raw.items():
            if k not in ATT_FIELDS:
                bad(f"att.{k}", "unknown ATT option", f"use only {', '.join(ATT_FIELDS)}")
                continue
            try:
                att[k] = _int(v, size=k == "buffer_size")
            except ValueError as exc:
                bad(f"att.{k}", str(exc))
                continue
            if k in ("shader_engine_mask", "buffer_size", "simd_select") and att[k] == 0:
                bad(f"att.{k}", "must not be 0", "e.g. 0x1 for shader_engine_mask, 0xF for simd_select")
            elif att[k] > limits[k]:
                bad(f"att.{k}", f"{_short(v)} is above {limits[k]:#x}" if k != "target_cu" else
                    f"{_short(v)} is not a CU id (0 to {limits[k]})")
    timeout = merged.timeout_s
    if timeout is not None and not valid_timeout(timeout):
        bad("timeout_s", f"{_short(timeout)} is not a positive number of seconds (at most {MAX_TIMEOUT_S:g})")
    tags_raw = merged.tags
    if not isinstance(tags_raw, list) or not all(isinstance(t, (str, int)) for t in tags_raw):
        bad("tags", "must be a list of strings")
        tags_raw = []
    if not ok:
        return None
    # every value checked above (`bad` clears ok): the types the entry declares
    return Entry(name=cast(str, name), cmd=cmd, cwd=str(cwd), env=tuple(sorted(env.items())),
                 kernel=cast("str | None", kernel),
                 iterations=iterations, pmc=pmc, target_cu=att["target_cu"],
                 shader_engine_mask=att["shader_engine_mask"], simd_select=att["simd_select"],
                 buffer_size=att["buffer_size"],
                 timeout_s=float(cast(float, timeout)) if timeout is not None else None,
                 tags=tuple(str(t) for t in tags_raw))


@record
class Top:
    """The file's top level, decoded once: its entries (each still a YAML value), `defaults` and the
    Slurm prelude; a problem with either is added to the checker and leaves the field empty."""
    entries: tuple[YamlValue, ...]
    defaults: Given
    prelude: str

    @classmethod
    def read(cls, doc: YamlValue, chk: _Checker) -> "Top":
        items: YamlValue = None
        defaults, prelude = Given(), ""
        if isinstance(doc, list):
            items = doc
        elif isinstance(doc, dict):
            for key in doc:
                if key not in TOP_FIELDS:
                    chk.add("(file)", str(key), "unknown top-level key", f"use only {', '.join(TOP_FIELDS)}")
            given = dict.fromkeys(TOP_FIELDS) | {k: v for k, v in doc.items() if k in TOP_FIELDS}
            items, d = given["entries"], given["defaults"] or {}
            if not isinstance(d, dict):
                chk.add("(defaults)", "defaults", "must be a map of entry fields",
                        f"any of {', '.join(DEFAULT_FIELDS)}")
            else:
                for key in d:
                    if key not in DEFAULT_FIELDS:
                        chk.add("(defaults)", str(key), "not allowed in defaults",
                                f"use only {', '.join(DEFAULT_FIELDS)}")
                defaults = Given.read({k: v for k, v in d.items() if k in DEFAULT_FIELDS})
            slurm = given["slurm"] or {}
            if not isinstance(slurm, dict) or set(slurm) - {"prelude"} or \
                    not isinstance(text := ({"prelude": ""} | slurm)["prelude"], str):
                chk.add("(file)", "slurm", "must be a map with one key, prelude (a string of shell lines)",
                        "slurm: {prelude: 'module load rocm'}")
            else:
                prelude = text
        if not isinstance(items, list) or not items:
            chk.add("(file)", "entries", "no entries", "a YAML list of entries, or a map with an 'entries' list; "
                    "`hotspot sweep --init` writes an example")
            items = []
        return cls(tuple(items), defaults, prelude)


def load_recipes(path: Path) -> Recipes:
    """Parse and validate; raise InputError (exit 3) listing every problem in the file."""
    import yaml

    path = Path(path)
    try:
        raw_bytes = read_regular(path, MAX_RECIPES_BYTES,  # a FIFO or device is refused, unread
                                 "split the entries over several recipes files")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the recipes file: {exc.strerror or exc}",
                         "check the path; `hotspot sweep --init recipes.yaml` writes an example") from None
    try:
        loader = _safe_loader()
        _check_bounded(raw_bytes, loader)  # before anything is built
        doc = yaml.load(raw_bytes, Loader=loader)  # noqa: S506 - a safe loader, on a bounded document
    except _Unbounded as exc:
        fix = ("a recipes file is a list of flat entries (`hotspot sweep --init` writes an example)"
               if "nested" in exc.what else "write the entries out, or use fewer aliases (&name / *name); "
               "a recipes file is a list of flat entries" if "alias" in exc.what else
               f"split the entries over several recipes files of at most {MAX_VALUES:,} values each")
        raise InputError(f"{path}: {exc.what} (line {exc.line}); refused", fix) from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own limit (1000)
            raise InputError(f"{path}: nested more than {MAX_DEPTH} levels deep; refused",
                             "a recipes file is a list of flat entries (`hotspot sweep --init` writes an example)") from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}",
                         "fix the YAML syntax (indentation, quotes, ':' after keys)") from None
    except RecursionError:
        doc = None
        depth = MAX_DEPTH + 1
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more digits than Python converts
        raise InputError(f"{path}: a value cannot be read: {_short(str(exc))}",
                         "numbers in a recipes file are small integers or seconds") from None
    else:
        depth = _depth(doc)
    if depth > MAX_DEPTH:
        raise InputError(f"{path}: nested more than {MAX_DEPTH} levels deep",
                         "a recipes file is a list of flat entries (`hotspot sweep --init` writes an example)")
    chk = _Checker()
    top = Top.read(doc, chk)
    base = path.resolve().parent
    defaults = top.defaults
    if defaults.present:
        # Checked once, as "(defaults)"; a field with a problem there is left out of every entry.
        before = len(chk.problems)
        _entry(Given(), defaults, "(defaults)", base, chk, required=False)
        defaults = defaults.without({p.field.split(".")[0] for p in chk.problems[before:]})
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(top.entries, start=1):
        if not isinstance(raw, dict):
            chk.add(f"#{i}", "(entry)", f"is a {type(raw).__name__}, not a map", "each entry is a map with name and cmd")
            continue
        given = Given.read(raw)  # the entry decoded once; everything below reads its attributes
        name = given.name
        label = f"#{i} ({name})" if isinstance(name, str) else f"#{i}"
        if isinstance(name, str) and name in seen:  # every duplicate, whatever else is wrong with it
            chk.add(label, "name", f"{name!r} is already used by entry #{seen[name]}",
                    "give every entry a unique name")
        elif isinstance(name, str):
            seen[name] = i
        entry = _entry(given, defaults, label, base, chk)
        if entry is not None:
            entries.append(entry)
    if chk.problems:
        n = len(chk.problems)
        from hotspot.render.tables import shorten_left

        # short fixed words: with the path cut to 80 the line stays within 200 characters
        raise InputError(f"{shorten_left(str(path), 80)}: {n} problem{'s' if n > 1 else ''} in the recipes, "
                         "nothing was run", "fix each problem listed above and rerun",
                         code="bad-recipes", details={"problems": [p.__dict__ for p in chk.problems]})
    return Recipes(path.resolve(), tuple(entries), top.prelude, hashlib.sha256(raw_bytes).hexdigest())


class _Unbounded(Exception):
    """The YAML reader stopped: `what` the file does, at `line`."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(line, what)
        self.line, self.what = line, what


def _safe_loader() -> type:
    """libyaml's safe loader when PyYAML has it (five times faster in this file's tests), else the
    pure-Python one; both build the same values."""
    import yaml

    loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def _check_bounded(raw: bytes, loader: type) -> None:
    """Walk the file's YAML events (no values built) and refuse it, as soon as the walk gets there,
    when it holds more than MAX_VALUES values counting each alias as its anchor's whole size (an
    alias bomb: a few lines expanding to 10^9 values; or a file merely that large), nests deeper
    than MAX_DEPTH, or holds an alias inside its own anchor (a structure without end). Cheap: with
    libyaml a million events take about a second, and the walk stops at MAX_VALUES."""
    import yaml

    total, aliased = 0, False
    sizes: dict[str, int] = {}  # anchor -> its expanded size, once its node ended
    open_: list[tuple[str | None, list[int]]] = []  # each collection being read: its anchor, [its size so far]
    for ev in yaml.parse(raw, Loader=loader):
        line = ev.start_mark.line + 1 if ev.start_mark else 0
        if isinstance(ev, yaml.CollectionStartEvent):
            open_.append((ev.anchor, [1]))
            total += 1
            if len(open_) > MAX_DEPTH:
                raise _Unbounded(line, f"nested more than {MAX_DEPTH} levels deep")
            continue
        if isinstance(ev, yaml.CollectionEndEvent):
            anchor, (size,) = open_.pop()
            if anchor:
                sizes[anchor] = size
        elif isinstance(ev, yaml.ScalarEvent):
            size = 1
            total += 1
            if ev.anchor:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.AliasEvent):
            if ev.anchor in {a for a, _ in open_}:
                raise _Unbounded(line, "holds an alias inside its own anchor")
            size = sizes.get(ev.anchor, 0)  # an undefined alias: the loader says so
            total += size
            aliased = True
        else:
            continue
        if open_:
            open_[-1][1][0] += size
        if total > MAX_VALUES:
            raise _Unbounded(line, f"expands to more than {MAX_VALUES:,} values through its aliases" if aliased
                             else f"holds more than {MAX_VALUES:,} values")


def _depth(doc: object) -> int:
    """How deeply lists and maps nest (iterative: a deep document cannot exhaust the stack)."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                return d
            stack += [(v, d + 1) for v in (node.values() if isinstance(node, dict) else node)]
    return deepest


EXAMPLE = """\
# hotspot sweep recipes: one entry per kernel (or benchmark) to trace, each on a GPU of its own.
# Run:     hotspot sweep recipes.yaml --gpus all
# Report:  hotspot sweep report hotspot-sweeps/<dir> [--html dashboard.html]
# Slurm:   hotspot sweep recipes.yaml --slurm --nodes 4 --partition gpu

# Applied to every entry (an entry's own value wins; env and att maps are merged).
defaults:
  timeout_s: 900            # stop an entry (its whole process tree) after this many seconds
  env:
    HIP_FORCE_DEV_KERNARG: "1"
  att:
    target_cu: 1            # att_target_cu; empty traces are retried on other CUs (--att-retries)
    shader_engine_mask: 0x1 # att_shader_engine_mask
    simd_select: 0xF        # att_simd_select
    buffer_size: 256M       # att_buffer_size (one buffer shared by all traced shader engines)

# Shell lines the Slurm job script runs before hotspot (module loads, venv activation).
slurm:
  prelude: |
    # module load rocm

entries:
  - name: gemm_bf16                       # unique and file-name safe
    cmd: [python, bench_gemm.py, --dtype, bf16, --m, "8192"]   # an argument list, never a shell
    cwd: .                                # relative to this file
    kernel: "^gemm_"                      # regex; omit it to let discovery pick the hottest kernel
    iterations: 5-6                       # which calls of the kernel to trace
    tags: [gemm, bf16]

  - name: layernorm
    cmd: python bench_norm.py --rows 4096 # a string is split like a shell would, without running one
    pmc: [TCC_HIT_sum, TCC_MISS_sum]      # counters collected after the trace
    timeout_s: 300
"""
