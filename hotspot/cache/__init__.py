"""The result cache: derived data and whole outputs of read-only commands, kept in the user cache
dir and reused while every file they were computed from is unchanged (docs/cache.md).

- store.py: where entries live, their checked on-disk format, atomic writes, LRU eviction.
- deps.py: what a computation read (files opened, folders listed) and their stat signatures.
- derived.py: memoizes one analysis step (a dispatch's analysis) across processes.
- output.py: the launcher's fast path: a command's stdout, stderr and exit code replayed.

Only the standard library is imported here: the launcher's hit path runs before typer is loaded.
"""
