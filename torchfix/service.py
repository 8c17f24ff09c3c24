"""Where the pipeline's checks go: a *check service* answers "is this candidate equivalent?".

The pipeline climbs each proposal's ladder in order and needs each rung's verdict before it
decides whether to ask about the next one, so the one call it must have is a blocking
``check(kernel) -> Verdict``. A service that can work ahead -- a cluster with many workers --
also takes ``submit(ladders)``: the rungs a file's proposals may ask about, in order, handed over
as soon as the file's proposals are known, so that their checks run while the pipeline is still
busy with earlier ones. ``submit`` is only a hint: the verdicts still come back through ``check``, in the
order the ladder asks for them, so the decisions (and the output) do not depend on it.

Two implementations:

- :class:`LocalCheckService` (this module): today's behaviour. One :class:`Checker` in this
  process, built on the first check (so a run with nothing to check never starts a worker nor
  imports torch); ``submit`` does nothing, since its single boxed worker answers one request at
  a time anyway.
- ``torchfix.cluster.ClusterChecker``: checks and measurements are tasks on a Dask cluster
  (``--scheduler``); ``submit`` sends the first rung of every proposal of a file at once (later
  rungs are needed only when the first fails: sending them too mostly buys unread checks).

Both are also the pipeline's ``CheckerFactory`` (calling one returns the checker to ask), so the
pipeline's signature stays what it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:
    from torchfix.equivalence.kernel import Kernel, Verdict
    from torchfix.pipeline import CheckerFactory, CheckerLike


class CheckService(Protocol):
    """What the pipeline asks for verdicts (see the module docstring)."""

    def submit(self, ladders: Sequence[Sequence[Kernel]]) -> None:
        """Start checking rungs of these ladders if this service can work ahead; never required."""

    def check(self, kernel: Kernel) -> Verdict:
        """The verdict on ``kernel``, waiting for it."""

    def __call__(self) -> CheckerLike:
        """The checker to ask (the pipeline's ``CheckerFactory`` signature)."""

    def close(self) -> None:
        """Stop whatever the service started (worker processes, cluster tasks)."""


class LocalCheckService:
    """Checks in this process's own boxed worker: a checker built on first use, closed at the end."""

    def __init__(self, factory: CheckerFactory) -> None:
        self._factory = factory
        self._checker: CheckerLike | None = None

    def __call__(self) -> CheckerLike:
        if self._checker is None:
            self._checker = self._factory()
        return self._checker

    def submit(self, ladders: Sequence[Sequence[Kernel]]) -> None:
        # one boxed worker answers one request at a time: nothing to gain by asking early
        return None

    def check(self, kernel: Kernel) -> Verdict:
        return self().check(kernel)

    def close(self) -> None:
        checker, self._checker = self._checker, None
        if checker is not None and hasattr(checker, "close"):
            checker.close()
