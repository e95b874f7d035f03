"""This process's peak resident memory, for the benchmark scripts that print it."""

from __future__ import annotations

import resource
import sys
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak RSS. Linux's VmHWM first: ru_maxrss survives exec, so a child started
    by a large parent would report the parent's size."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)  # KiB on Linux, bytes on macOS
