import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
CORPUS = ROOT / "corpus"


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device present")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def checker():
    from torchfix.equivalence.checker import Checker, CheckSettings

    # equivalence only: the rule tests are about what is emitted when a rewrite is verified; the
    # timing stage has tests of its own (tests/test_timing.py)
    with Checker(CheckSettings(examples=80, measure=False)) as instance:
        yield instance


def corpus_cases(code: str) -> list[Path]:
    return sorted(p for p in (CORPUS / code).glob("*.py") if not p.name.endswith((".expected.py", ".optimum.py")))
