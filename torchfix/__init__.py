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
