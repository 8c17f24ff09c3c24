"""Packaging: one top-level package in site-packages, the distinct distribution name, and the
standalone checker reachable as ``python -m torchfix.equivalence``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_maps_the_folders_under_torchfix() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["project"]["name"] == "torchfix-codemod"  # "torchfix" on the index is another tool
    # the entry takes SIGINT/SIGTERM before it imports the command line (torchfix/__main__.py)
    assert config["project"]["scripts"] == {"torchfix": "torchfix.__main__:main"}
    setuptools = config["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"torchfix.codemods": "codemods", "torchfix.equivalence": "equivalence"}
    # every package folder of the repository is listed, so none is left out of the wheel
    listed = set(setuptools["packages"])
    for folder, package in (("torchfix", "torchfix"), ("codemods", "torchfix.codemods"), ("equivalence", "torchfix.equivalence")):
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            assert ".".join((package, *relative)) in listed, f"{init.parent} is not packaged"


def test_the_wheel_holds_only_torchfix(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.startswith("torchfix_codemod-")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"torchfix", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    names = zipfile.ZipFile(wheel).namelist()
    assert "torchfix/codemods/registry.py" in names and "torchfix/equivalence/worker.py" in names


def test_standalone_checker_runs_as_a_subpackage() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "torchfix.equivalence", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0 and "python -m torchfix.equivalence" in result.stdout
