"""Atomic writes: a temporary file in the same directory, fsync, then rename over the original.

A reader (or a Ctrl-C) sees the old file or the new one, never half of either. The file's mode is
kept; a symlink stays a symlink and the rewrite goes to the file it points to.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".torchfix-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
