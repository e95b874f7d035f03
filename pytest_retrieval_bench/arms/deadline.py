"""A time limit for an arm running in this process (`--bench-arm-timeout`).

A Python or fixture arm that never returns would hang the whole run. On the main thread of a
POSIX process a real-time interval timer interrupts it (sleeps and waits included) by raising
`ArmTimedOut`, a BaseException, so an arm's own `except Exception` cannot swallow it; the item is
then an error and the session goes on. An outer timer (pytest-timeout's, say) is restored after.
Command arms keep their own per-arm timeout, which kills the program. A declared arm may set its
own limit instead of the run's: a `timeout` attribute on an object arm, `@arm(..., timeout=S)` on a
fixture arm.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from pytest_retrieval_bench.arms.base import checked_timeout

DEFAULT_ARM_TIMEOUT = 300.0


class ArmTimedOut(BaseException):
    """Raised inside an arm that outlived its time limit."""


def arm_time_limit(arm: Any, run_default: float | None) -> tuple[float | None, str]:
    """The limit for one call of `arm` and where it comes from; none for a command arm or agent (it
    kills its program at its own timeout)."""
    if hasattr(arm, "descriptor") or getattr(arm, "ends_own_program", False):
        return None, ""
    own = checked_timeout(getattr(arm, "timeout", None), getattr(arm, "name", "?"))
    return (own, "the arm's own timeout") if own is not None else (run_default, "--bench-arm-timeout")


@contextmanager
def time_limit(seconds: float | None, what: str, source: str = "--bench-arm-timeout") -> Iterator[None]:
    usable = bool(seconds) and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise ArmTimedOut(f"{what} exceeded its time limit of {seconds:g} s ({source})")

    previous = signal.signal(signal.SIGALRM, expire)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, float(seconds))  # type: ignore[arg-type]
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay:
            signal.setitimer(signal.ITIMER_REAL, max(outer_delay - (time.monotonic() - started), 0.001), outer_interval)
