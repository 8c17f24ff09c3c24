"""Atomic writes: a temporary file in the same directory, fsync, then rename over the original.

A reader (or a Ctrl-C, or a crash) sees the old file or the new one, never half of either: the
rename is atomic because the temporary file lives on the same file system as the target. The
file's permission bits are kept. A symlink stays a symlink: the rewrite goes to the file it points
to. (Like every rename-based write, this gives a hard-linked file a new inode.)
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".torchfix-tmp"


def atomic_write(path: Path | str, data: bytes) -> None:
    """Replace the contents of ``path`` (or of the file its symlink resolves to) with ``data``."""
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # mkstemp creates 0600
        os.replace(tmp, target)
    except BaseException:  # KeyboardInterrupt too: never leave the temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable; best effort (not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
