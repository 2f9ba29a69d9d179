"""A sweep command's outcome: its exit code from entry states, and its Result, whose envelope says
`ok` only when that code is 0 (a sweep with failed entries exits 6 and is not ok)."""

from __future__ import annotations

from hotspot.result import Result

FAILING = ("failed", "timed-out", "interrupted")


def exit_code(states: set[str], nothing_to_do: bool = False) -> int:
    """6 when an entry failed, timed out or was interrupted; 4 when one was empty; else 7 when
    there was `nothing_to_do` (every entry asked for had already run), else 0. The entries' outcome
    wins over nothing-to-do: a failure left unretried is still the sweep's answer."""
    from hotspot.errors import EXIT_COMMAND_FAILED, EXIT_EMPTY_TRACE, EXIT_NOTHING_TO_DO

    if states & set(FAILING):
        return EXIT_COMMAND_FAILED
    if "empty" in states:
        return EXIT_EMPTY_TRACE
    return EXIT_NOTHING_TO_DO if nothing_to_do else 0


class SweepResult(Result[object]):
    """A sweep's Result: the envelope always carries `exit_code` (0 too), and `ok` is true only
    when it is 0."""

    def envelope(self) -> dict[str, object]:
        env = super().envelope()
        env["exit_code"] = self.exit_code
        return env
