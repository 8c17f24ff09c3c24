"""The ast-level skeletons (``Rule.might_match_tree``) are necessary conditions of the rules.

A skeleton that says "no" where the LibCST matcher would propose something loses a rewrite (or a
skip note) silently, so every source the project has -- corpus cases, their expected outputs,
traps, and every rule's own examples -- is run through each rule both ways.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.registry import ALL_RULES
from torchfix.codemods.syntax import SyntaxIndex, parse_tree
from torchfix.pipeline import process_source

ROOT = Path(__file__).resolve().parent.parent


def _sources() -> list[tuple[str, str]]:
    found = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "corpus").rglob("*.py"))]
    for rule in ALL_RULES:
        for k, example in enumerate(rule.examples):
            before, after = example.dedented()
            found.append((f"{rule.code}-example-{example.id or k}", before))
            if after is not None:
                found.append((f"{rule.code}-example-{example.id or k}-after", after))
    return found


SOURCES = _sources()


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_the_skeleton_admits_every_source_the_rule_proposes_on(rule: type) -> None:
    proposed_on = 0
    for name, source in SOURCES:
        proposals = list(rule().propose(MetadataWrapper(cst.parse_module(source))))
        if not proposals:
            continue
        proposed_on += 1
        assert rule.might_match_tree(SyntaxIndex(ast.parse(source))), f"{rule.code}'s skeleton rejects {name}"
    # the test means something only if the rule proposed on a good share of the sources
    assert proposed_on >= 10


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_the_skeleton_rejects_code_without_the_pattern(rule: type) -> None:
    source = textwrap.dedent(
        """
        import torch

        def step(model, batch: torch.Tensor) -> torch.Tensor:
            names = {k: v for k, v in model.named_parameters()}
            for name in names:
                print(name)
            return model(batch).mean()
        """
    )
    assert not rule.might_match_tree(SyntaxIndex(ast.parse(source)))


def test_parse_tree_gives_none_for_what_ast_cannot_parse() -> None:
    assert parse_tree(b"print 'hello'\n") is None
    assert parse_tree(b"x = 1\x00\n") is None
    assert parse_tree(b"\xff\xfe not utf-8 \x81\n") is None
    assert parse_tree("# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")) is not None


def test_a_file_without_any_skeleton_is_never_parsed_by_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    import torchfix.pipeline as pipeline

    def fail(data: bytes) -> None:
        raise AssertionError("LibCST parse of a file no skeleton admits")

    monkeypatch.setattr(pipeline, "parse", fail)
    source = b"import torch\n\ndef f(x: torch.Tensor) -> float:\n    return x.sum().item()\n"
    result = process_source(source, "f.py", ALL_RULES, lambda: None)  # type: ignore[arg-type,return-value]
    assert result.status == "no-candidate" and not result.records and result.error is None


def test_a_file_ast_cannot_parse_still_gets_libcsts_error() -> None:
    source = b"import torch\nfor i in range(3):\n    print 'x', i.item()\n"
    result = process_source(source, "old.py", ALL_RULES, lambda: None)  # type: ignore[arg-type,return-value]
    assert result.status == "error" and result.error
