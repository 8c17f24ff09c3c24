"""Running the torchfix CLI in-process, as a test drives it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import torchfix.cli as cli_module


def run(args: list[str], cwd: Path, capfdbinary) -> tuple[int, bytes, str]:  # noqa: ANN001
    """``torchfix ARGS`` in ``cwd``: (exit code, stdout bytes, stderr text)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with pytest.raises(SystemExit) as exit_info:
            cli_module.main(args)
    finally:
        os.chdir(old)
    out, err = capfdbinary.readouterr()
    return exit_info.value.code, out, err.decode()
