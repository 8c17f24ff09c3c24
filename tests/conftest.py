import socket
import sys
import threading
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


@pytest.fixture
def listener():
    """A TCP server on the loopback that records whether anyone connected."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    connected: list[bool] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                connected.append(True)
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], connected
    stop.set()
    thread.join()
    server.close()
