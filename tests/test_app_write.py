"""Atomic in-place writes: mode kept, symlinks kept, no temporary file left behind on failure."""

from __future__ import annotations

import os
import stat

import pytest

import torchfix.write as write_module
from torchfix.write import TEMP_SUFFIX, atomic_write


def _leftovers(directory):  # noqa: ANN001, ANN202
    return [p.name for p in directory.iterdir() if p.name.endswith(TEMP_SUFFIX)]


def test_writes_bytes_and_keeps_the_mode(tmp_path):
    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")
    target.chmod(0o751)
    atomic_write(target, b"x = 2\r\n")
    assert target.read_bytes() == b"x = 2\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert _leftovers(tmp_path) == []


def test_read_only_file_is_rewritten_and_stays_read_only(tmp_path):
    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")
    target.chmod(0o444)
    atomic_write(target, b"x = 2\n")
    assert target.read_bytes() == b"x = 2\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_symlink_stays_a_link_and_the_target_is_written(tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "m.py"
    real.write_bytes(b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(os.path.relpath(real, tmp_path))
    atomic_write(link, b"x = 2\n")
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "m.py")
    assert real.read_bytes() == b"x = 2\n"
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "real") == []


def test_chained_symlinks_resolve_to_the_final_file(tmp_path):
    real = tmp_path / "m.py"
    real.write_bytes(b"x = 1\n")
    (tmp_path / "a.py").symlink_to(real)
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    atomic_write(tmp_path / "b.py", b"x = 2\n")
    assert (tmp_path / "a.py").is_symlink() and (tmp_path / "b.py").is_symlink()
    assert real.read_bytes() == b"x = 2\n"


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_failure_leaves_the_original_and_no_temp_file(tmp_path, monkeypatch, failing):
    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")

    def boom(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_module.os, failing, boom)
    with pytest.raises(OSError):
        atomic_write(target, b"x = 2\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"x = 1\n"
    assert _leftovers(tmp_path) == []


def test_interrupt_leaves_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")

    def interrupt(*args):  # noqa: ANN002, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(write_module.os, "chmod", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"x = 2\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"x = 1\n" and _leftovers(tmp_path) == []
