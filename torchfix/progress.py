"""Progress of a run over many files, on stderr.

On a terminal: a rich progress bar (per-file lines scroll above it). Elsewhere (CI logs, pipes):
a plain line when the run passes a tenth, ``torchfix: 300/1000 files (30%), 12.3s`` -- but at most
one every :data:`PLAIN_INTERVAL` seconds, so a short run prints none and a long one a line every
so often, as CI logs expect. Runs over fewer than :data:`MIN_FILES` files show no progress at
all, and neither does ``--quiet``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, TextIO

MIN_FILES = 50
#: the fewest seconds between two plain progress lines (and before the first)
PLAIN_INTERVAL = 10.0


class Progress:
    def __init__(
        self, total: int, stream: TextIO, enabled: bool, color: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        self.clock = clock
        self.started = clock()
        self._last_line = self.started
        self.enabled = enabled and total >= MIN_FILES
        self._bar: Any = None
        self._task: Any = None
        self._next_report = 1
        if self.enabled and _isatty(stream):
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

            console = Console(file=stream, highlight=False, markup=False, no_color=color is False or None)
            self._bar = Bar(
                TextColumn("torchfix"), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeElapsedColumn(),
                console=console, transient=True,
            )
            self._task = self._bar.add_task("files", total=total)
            self._bar.start()

    def echo(self, line: str) -> None:
        """A line for stderr that must not tear the bar."""
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            return
        # plain: a line when a tenth is passed, rate-limited (and none after the last: the summary
        # follows)
        tenth = self.done * 10 // self.total
        now = self.clock()
        if tenth >= self._next_report and self.done < self.total and now - self._last_line >= PLAIN_INTERVAL:
            self._next_report = tenth + 1
            self._last_line = now
            seconds = now - self.started
            self.stream.write(f"torchfix: {self.done}/{self.total} files ({self.done * 100 // self.total}%), {seconds:.1f}s\n")
            self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
