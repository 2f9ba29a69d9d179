"""A sweep command's outcome: its exit code from entry states, and its Result, whose envelope says
`ok` only when that code is 0 (a sweep with failed entries exits 6 and is not ok)."""

from __future__ import annotations

from hotspot.result import Result

FAILING = ("failed", "timed-out", "interrupted")


def exit_code(states: set[str]) -> int:
    """6 when an entry failed, timed out or was interrupted; 4 when one was empty; else 0."""
    if states & set(FAILING):
        return 6
    return 4 if "empty" in states else 0


class SweepResult(Result[object]):
    """A sweep's Result: the envelope carries `exit_code`, and `ok` is true only when it is 0."""

    exit_code: int = 0

    def envelope(self) -> dict[str, object]:
        env = super().envelope()
        env["ok"] = self.exit_code == 0
        env["exit_code"] = self.exit_code
        return env
