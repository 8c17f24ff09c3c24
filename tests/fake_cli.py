"""``python tests/fake_cli.py ARGS...``: the torchfix command line in a process of its own, with the
fake rule AssignOne (``x = 1`` -> ``x = 2``) and a fake checker that verifies everything -- no
torch. For tests that send signals to a run or must survive one that hangs. Environment:

- ``FAKE_CHECK_SECONDS``: each check sleeps this long;
- ``FAKE_WRITE_SECONDS``: each in-place write sleeps this long before it starts;
- ``FAKE_PROGRESS``: a file that gets a line after each check (``check``) and each write (``write``).

Not a test module (no ``test_`` prefix); ``benchmarks/fuzz_hostile.py`` drives it too.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's torchfix, whatever the working directory


def _install_fakes() -> None:
    import torchfix.cli as cli_module
    import torchfix.write as write_module
    from test_app_fakes import AssignOne, paced_checker_factory

    cli_module.load_rules = lambda select, ignore: [AssignOne]
    cli_module.documented_rules = lambda: [AssignOne]
    cli_module.make_checker = paced_checker_factory
    real_write = write_module.atomic_write
    pause = float(os.environ.get("FAKE_WRITE_SECONDS", "0"))
    progress = os.environ.get("FAKE_PROGRESS")

    def paced_write(path, data):  # noqa: ANN001, ANN202
        time.sleep(pause)
        real_write(path, data)
        if progress:
            with open(progress, "a") as handle:
                handle.write("write\n")

    write_module.atomic_write = paced_write


if __name__ == "__main__":
    from torchfix.__main__ import main

    sys.argv[0] = "torchfix"
    main(prepare=_install_fakes)  # as the console script does, signals taken first
