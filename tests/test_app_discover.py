"""File discovery: explicit files, walked directories, skipped folders, .gitignore, symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from torchfix.discover import DiscoveryError, discover


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def rels(root: Path, found: list[Path]) -> list[str]:
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in found]


@pytest.fixture
def chdir(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_walk_is_sorted_and_skips_caches_envs_and_hidden(chdir):
    touch(
        chdir, "b.py", "a.py", "pkg/z.py", "pkg/a.py", "notes.txt", "stub.pyi",
        ".git/x.py", ".hidden/x.py", "__pycache__/x.py", "venv/x.py", ".venv/x.py", "env/x.py",
        "lib/site-packages/x.py", "build/x.py", "dist/x.py", "node_modules/x.py", "myenv/x.py",
    )
    (chdir / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    assert rels(chdir, discover(["."])) == ["a.py", "b.py", "pkg/a.py", "pkg/z.py"]


def test_explicit_files(chdir):
    touch(chdir, "venv/x.py", "types.pyi", "notes.txt", "build/y.py")
    (chdir / ".gitignore").write_text("build/\n")
    found = discover(["venv/x.py", "types.pyi", "build/y.py"])
    assert rels(chdir, found) == ["venv/x.py", "types.pyi", "build/y.py"], "naming a file is asking for it"
    with pytest.raises(DiscoveryError, match="not a Python file"):
        discover(["notes.txt"])
    with pytest.raises(DiscoveryError, match="no such file"):
        discover(["missing.py"])


def test_gitignore_in_the_tree_and_above_it(chdir):
    (chdir / ".git").mkdir()
    (chdir / ".gitignore").write_text("generated/\n*_pb2.py\n")
    touch(chdir, "src/generated/g.py", "src/msg_pb2.py", "src/keep.py", "src/sub/local.py", "src/sub/other.py")
    (chdir / "src" / "sub" / ".gitignore").write_text("local.py\n")
    assert rels(chdir, discover(["."])) == ["src/keep.py", "src/sub/other.py"]
    # walking a subdirectory still honours the repository's root .gitignore
    assert rels(chdir, discover(["src"])) == ["src/keep.py", "src/sub/other.py"]


def test_gitignore_negation_and_info_exclude(chdir):
    (chdir / ".git" / "info").mkdir(parents=True)
    (chdir / ".git" / "info" / "exclude").write_text("scratch.py\n")
    (chdir / ".gitignore").write_text("gen_*.py\n!gen_keep.py\n")
    touch(chdir, "gen_a.py", "gen_keep.py", "scratch.py", "main.py")
    assert rels(chdir, discover(["."])) == ["gen_keep.py", "main.py"]


def test_exclude_option(chdir):
    touch(chdir, "a.py", "tests/t.py", "pkg/legacy/old.py")
    assert rels(chdir, discover(["."], ["tests/", "legacy"])) == ["a.py"]


def test_symlinked_directories_are_not_followed_and_files_are_deduplicated(chdir):
    touch(chdir, "real/m.py", "outside/o.py")
    (chdir / "real" / "loop").symlink_to(chdir, target_is_directory=True)
    (chdir / "real" / "out").symlink_to(chdir / "outside", target_is_directory=True)
    (chdir / "real" / "alias.py").symlink_to(chdir / "real" / "m.py")
    assert rels(chdir, discover(["real"])) == ["real/alias.py"], "alias.py and m.py are one file"
    assert len(discover(["real", "real/m.py", "./real"])) == 1


def test_symlinked_directory_named_explicitly_is_walked(chdir):
    touch(chdir, "outside/o.py")
    (chdir / "link").symlink_to(chdir / "outside", target_is_directory=True)
    assert rels(chdir, discover(["link"])) == ["link/o.py"]


def test_dangling_and_looping_symlinks_and_special_files_are_returned_for_the_reader_to_report(chdir):
    # discovery opens nothing: reading reports each of these for that file alone (not exit 2)
    touch(chdir, "ok.py", "tree/ok.py")
    for base in (chdir, chdir / "tree"):
        (base / "dead.py").symlink_to(base / "nowhere.py")
        (base / "loop_a.py").symlink_to(base / "loop_b.py")
        (base / "loop_b.py").symlink_to(base / "loop_a.py")
        os.mkfifo(base / "fifo.py")
    (chdir / "tree" / "dir.py").symlink_to(chdir / "tree", target_is_directory=True)
    named = discover(["dead.py", "loop_a.py", "fifo.py", "ok.py"])
    assert rels(chdir, named) == ["dead.py", "loop_a.py", "fifo.py", "ok.py"]
    walked = rels(chdir, discover(["tree"]))
    assert walked == ["tree/dead.py", "tree/fifo.py", "tree/loop_a.py", "tree/loop_b.py", "tree/ok.py"], "a link to a directory is not a file"


def test_a_fifo_named_gitignore_does_not_block_the_walk(chdir):
    touch(chdir, "a.py")
    os.mkfifo(chdir / ".gitignore")
    assert rels(chdir, discover(["."])) == ["a.py"]


def test_a_tree_deeper_than_pythons_recursion_limit_is_walked(chdir):
    # directories 1,200 deep (a hostile tree): the walk keeps its own stack
    here = os.getcwd()
    try:
        for _ in range(1200):
            os.mkdir("d")
            os.chdir("d")
        Path("m.py").write_text("x = 1\n")
    finally:
        os.chdir(here)
    try:
        (found,) = discover(["."])
        assert found.name == "m.py" and len(found.parts) == 1201
    finally:
        # shutil.rmtree (pytest's clean-up) recurses and would fail on it: rm does not
        subprocess.run(["rm", "-rf", "d"], check=True)
