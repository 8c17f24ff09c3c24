"""``python -m torchfix`` and the ``torchfix`` console script.

The first thing a run does is take SIGINT and SIGTERM: importing the command line (click, the
pipeline) takes a noticeable fraction of a second, and a signal in that time would otherwise end
the process the default way -- killed by SIGTERM with no word said, or a KeyboardInterrupt
traceback. Caught here, it is a clean exit (128 + the signal) with a message. Only a signal in
the interpreter's own start-up, before this module runs, escapes.
"""

from __future__ import annotations

import sys
from typing import Callable


def main(prepare: Callable[[], None] | None = None) -> None:
    """Run the command line. ``prepare``: called once the signals are taken, before the command
    line is imported (tests install their fakes there)."""
    import signal

    from torchfix import forget_working_directory

    forget_working_directory()  # `python -m torchfix` put it first on sys.path
    received: list[int] = []

    def starting(signum: int, frame: object) -> None:
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, starting)
    try:
        if prepare is not None:
            prepare()
        from torchfix.cli import main as run_command_line
    except BaseException as exc:
        # a signal inside an import can surface wrapped: a KeyboardInterrupt raised in a class
        # body's `__set_name__` comes out as the RuntimeError it causes
        if not isinstance(exc, KeyboardInterrupt) and not (received and _caused_by_interrupt(exc)):
            raise
        name = "terminated (SIGTERM)" if received and received[0] == signal.SIGTERM else "interrupted"
        sys.stderr.write(f"torchfix: {name} while starting: nothing was read or written\n")
        sys.exit(128 + (received[0] if received else signal.SIGINT))
    run_command_line()  # takes the signals over for the rest of the run


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


if __name__ == "__main__":
    main()
