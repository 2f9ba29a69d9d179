"""A sweep command's outcome: its exit code from entry states, and its Result, whose envelope says
`ok` only when that code is 0 (a sweep with failed entries exits 6 and is not ok)."""

from __future__ import annotations

from hotspot.result import JsonObject, Result

FAILING = ("failed", "timed-out", "interrupted")


def exit_code(states: set[str]) -> int:
    """6 when an entry failed, timed out or was interrupted; 4 when one was empty; else 0."""
    if states & set(FAILING):
        return 6
    return 4 if "empty" in states else 0


class SweepResult(Result):
    """A sweep's Result: the envelope always carries `exit_code` (0 too), and `ok` is true only
    when it is 0."""

    def envelope(self) -> JsonObject:
        env = super().envelope()
        env["exit_code"] = self.exit_code
        return env
