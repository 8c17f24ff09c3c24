"""Check the ast skeletons against the LibCST rules on real code, and show how much they filter.

    python benchmarks/prefilter_soundness.py PATH [PATH ...]

For every ``.py`` file under PATH and every rule, the rule's LibCST matcher runs on the whole file
(no pre-filter at all) and its ``might_match_tree`` skeleton (``codemods/syntax.py``) runs on the
file's ``ast``. A file where the rule proposes a rewrite but the
skeleton says no is a *miss*: the pre-filter would lose that rewrite. The figure to look for is
``misses: 0``; the others say how many files each skeleton lets through to LibCST. A file where the
rule only says why it leaves a loop alone (a skip note, shown with ``-v``) is no miss: its notes
are counted as "unsaid", with their reasons.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper  # noqa: E402

from torchfix.codemods.registry import ALL_RULES  # noqa: E402
from torchfix.codemods.syntax import SyntaxIndex, parse_tree  # noqa: E402


def _shape(reason: str) -> str:
    """A skip reason with its names blanked, so that reasons of one kind count together."""
    return re.sub(r"`[^`]*`", "`...`", reason)[:100]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    files = sorted(p for root in args.paths for p in (root.rglob("*.py") if root.is_dir() else [root]))
    admitted, proposing, unsaid, unsaid_reasons, misses = Counter(), Counter(), Counter(), Counter(), []
    parsed = 0
    for path in files:
        data = path.read_bytes()
        tree = parse_tree(data)
        try:
            module = cst.parse_module(data)
        except Exception:  # noqa: BLE001 - a file LibCST cannot parse has nothing to lose
            continue
        if tree is None:
            continue
        parsed += 1
        index = SyntaxIndex(tree)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        for rule in ALL_RULES:
            says_yes = rule.might_match_tree(index)
            admitted[rule.code] += says_yes
            try:
                proposals = list(rule().propose(wrapper))
            except Exception as exc:  # noqa: BLE001 - a rule crash is reported, not fatal here
                print(f"{path}: {rule.code} crashed: {type(exc).__name__}: {exc}")
                continue
            rewrites = [p for p in proposals if not p.skip_reason]
            if rewrites:
                proposing[rule.code] += 1
                if not says_yes:
                    misses.append(f"{path}: {rule.code} proposes at line {rewrites[0].line} but its skeleton says no")
            elif proposals and not says_yes:
                # only skip notes (shown with -v): what the pre-filter leaves unsaid, not a lost rewrite
                unsaid[rule.code] += len(proposals)
                for proposal in proposals:
                    unsaid_reasons[_shape(proposal.skip_reason or "")] += 1
    print(f"{len(files)} files, {parsed} parsed by both ast and LibCST")
    print(f"{'rule':<8} {'skeleton admits':>16} {'rule proposes':>14} {'skip notes unsaid':>18}")
    for rule in ALL_RULES:
        print(f"{rule.code:<8} {admitted[rule.code]:>16} {proposing[rule.code]:>14} {unsaid[rule.code]:>18}")
    if unsaid_reasons:
        print("skip notes on files a skeleton drops (no rewrite lost; shown only with -v when admitted):")
        for reason, count in unsaid_reasons.most_common(12):
            print(f"  {count:>4}  {reason}")
    for line in misses:
        print(line)
    print(f"misses: {len(misses)}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
