"""torchfix: vectorize slow element-at-a-time PyTorch code, and prove each rewrite equivalent.

The distribution installs three packages: ``torchfix`` (the application), ``torchfix.codemods``
(the transform passes) and ``torchfix.equivalence`` (the checker). In the repository the last two
are the top-level folders ``codemods/`` and ``equivalence/`` (pyproject's ``package-dir`` maps
them). Run from a source checkout (``python -m torchfix`` in the repository, a git worktree),
the import system would not find them under ``torchfix``, so the checkout's root joins this
package's search path -- only when those folders sit beside it, i.e. never in an installed copy.
"""

from pathlib import Path as _Path

__version__ = "0.1.0"

_CHECKOUT = _Path(__file__).resolve().parent.parent
if (_CHECKOUT / "codemods" / "__init__.py").is_file() and (_CHECKOUT / "equivalence" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))  # noqa: F821 - a package's __path__ is set by the import system
del _Path


def forget_working_directory() -> None:
    """Take the working directory off ``sys.path``. ``python -m`` and ``python -c`` put it first,
    and torchfix often runs inside the repository it scans, whose ``click.py`` or ``difflib.py``
    must never be imported in place of the real one (they would run with the user's rights,
    outside any sandbox). This package's own modules are found through the package."""
    import os
    import sys

    try:
        here = os.getcwd()
    except OSError:  # a working directory since removed: nothing can be imported from it
        here = ""
    sys.path[:] = [p for p in sys.path if p not in ("", here)]
