"""
A progress bar on stderr for long tool work (probing, tuning, solving): steps of a
known count, each with a note of what it is doing now.
"""

from __future__ import annotations

import sys
import time


class ProgressBar:
    WIDTH = 30

    def __init__(self, total: int, title: str, stream=None):
        self.total, self.title = max(total, 1), title
        self.stream = stream if stream is not None else sys.stderr
        self.done = -1
        self.step = ""
        self.started = time.time()
        self._shown = 0
        self._last = 0.0
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        """A terminal redraws one line; a log gets a line per step only."""

    def start_step(self, name: str) -> None:
        self.done += 1
        self.step = name
        if not self.live:
            self.stream.write(f"{self.title}: {self.done}/{self.total} {name}\n")
            self.stream.flush()
        self.note("")

    def note(self, what: str) -> None:
        now = time.time()
        if not self.live or now - self._last < 0.1:
            return
        self._last = now
        filled = self.WIDTH * max(self.done, 0) // self.total
        line = (f"\r{self.title} [{'#' * filled}{' ' * (self.WIDTH - filled)}] "
                f"{max(self.done, 0)}/{self.total} {self.step}: {what}")[:120]
        self.stream.write(line.ljust(self._shown))
        self._shown = len(line)
        self.stream.flush()

    def finish(self) -> None:
        elapsed = f"{time.time() - self.started:.0f} s"
        if self.live:
            self.done, self.step, self._last = self.total, "done", 0.0
            self.note(elapsed)
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.title}: done in {elapsed}\n")
        self.stream.flush()
