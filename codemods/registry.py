"""Every rule torchfix knows, by code, and selection by ``--select`` / ``--ignore``."""

from __future__ import annotations

from torchfix.codemods.base import Rule
from torchfix.codemods.tfv001_loop_over_batch import LoopOverBatch
from torchfix.codemods.tfv002_comprehension import ComprehensionOverTensor
from torchfix.codemods.tfv003_cat_in_loop import CatInLoop
from torchfix.codemods.tfv004_item_accumulator import ItemAccumulator
from torchfix.codemods.tfv005_elementwise_branch import ElementwiseBranch
from torchfix.codemods.tfv006_index_accumulation import IndexAccumulation
from torchfix.codemods.tfv007_running_scan import RunningScan

ALL_RULES: list[type[Rule]] = sorted(
    [LoopOverBatch, ComprehensionOverTensor, CatInLoop, ItemAccumulator, ElementwiseBranch, IndexAccumulation,
     RunningScan], key=lambda r: r.code,
)
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}


def _matches(code: str, selectors: list[str]) -> bool:
    return any(code.startswith(s) for s in selectors)


def select_rules(select: list[str] | None = None, ignore: list[str] | None = None) -> list[type[Rule]]:
    """Rules whose code starts with a selector in ``select`` (all when None) and none in ``ignore``.

    A selector that matches no rule is a usage error: a typo must not silently select nothing.
    """
    for selector in (select or []) + (ignore or []):
        normalized = selector.strip().upper()
        if not normalized or not any(rule.code.startswith(normalized) for rule in ALL_RULES):
            raise ValueError(f"unknown rule selector {selector!r} (known: {', '.join(RULES_BY_CODE)})")
    chosen = [s.strip().upper() for s in select] if select else None
    skipped = [s.strip().upper() for s in ignore] if ignore else []
    return [
        rule
        for rule in ALL_RULES
        if (chosen is None or _matches(rule.code, chosen)) and not _matches(rule.code, skipped)
    ]
