"""The ``torchfix`` command line.

Exit codes:
  0  success: a dry run (also when it printed a diff), an ``--apply`` run, a clean ``--check``;
  1  only with ``--check``: some file would be rewritten;
  2  a usage error (bad option, unknown rule code, missing path), or an internal failure: a crash in
     torchfix itself, a rewrite whose output did not parse, or a rewritten file that could not be
     written.
A file that cannot be read, decoded or parsed is reported (``path: error: reason``), left alone,
and does not change the exit code.

Tests replace the module-level hooks :func:`load_rules`, :func:`find_rule` and
:func:`make_checker` (monkeypatch) to run the CLI with fake rules and a fake checker.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import click

from equivalence.checker import CheckSettings  # stdlib-only module: cheap, and no torch
from torchfix import __version__

_DEFAULTS = CheckSettings()

if TYPE_CHECKING:
    from codemods.base import Rule
    from torchfix.pipeline import CheckerLike

EXIT_OK, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


# --- hooks (tests monkeypatch these) -------------------------------------------------------------
# codemods/ and equivalence/ are imported inside them: ``torchfix --version`` / ``--help`` stay
# fast, and torch is imported only by a checker worker that actually runs a check.


def load_rules(select: list[str] | None, ignore: list[str] | None) -> list[type[Rule]]:
    """The rules of this run; ValueError for an unknown code (a usage error)."""
    from codemods.registry import select_rules

    return select_rules(select, ignore)


def find_rule(code: str) -> type[Rule] | None:
    """The rule ``--explain CODE`` documents, or None."""
    from codemods.registry import ALL_RULES

    wanted = code.strip().upper()
    return next((rule for rule in ALL_RULES if rule.code == wanted), None)


def known_codes() -> list[str]:
    from codemods.registry import ALL_RULES

    return [rule.code for rule in ALL_RULES]


def make_checker(examples: int | None, seed: int | None, timeout: float | None) -> CheckerLike:
    """The checker of a run. Called at most once, when the first candidate needs checking."""
    from equivalence.checker import Checker, available_devices

    # options left unset keep the checker's own defaults (one source of truth)
    given = {"examples": examples, "seed": seed, "timeout": timeout}
    settings = CheckSettings(**{k: v for k, v in given.items() if v is not None}, devices=available_devices())
    return Checker(settings)


# --- helpers -------------------------------------------------------------------------------------


def _codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip() for c in text.split(",") if c.strip()]


def _display(path: Path) -> str:
    """The path as shown and used in diff headers: relative to the working directory."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return rel.replace(os.sep, "/")


class _LazyChecker:
    """A checker factory that builds the checker on first use and closes it at the end."""

    def __init__(self, factory: Callable[[], CheckerLike]) -> None:
        self._factory = factory
        self._checker: CheckerLike | None = None

    def __call__(self) -> CheckerLike:
        if self._checker is None:
            self._checker = self._factory()
        return self._checker

    def close(self) -> None:
        if self._checker is not None and hasattr(self._checker, "close"):
            self._checker.close()  # type: ignore[attr-defined]


def _err(line: str) -> None:
    click.echo(line, err=True)


# --- the command ---------------------------------------------------------------------------------


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--apply", "apply_", is_flag=True, help="Write the verified rewrites in place (atomically).")
@click.option("--check", is_flag=True, help="Exit 1 if any rewrite would be made; prints the diff, writes nothing.")
@click.option("--select", metavar="CODES", help="Only these rules (comma list; prefixes such as TFV00 allowed).")
@click.option("--ignore", metavar="CODES", help="Not these rules (comma list; prefixes allowed).")
@click.option("--exclude", metavar="GLOB", multiple=True, help="Skip walked paths matching this gitignore-style pattern.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.option("--unsafe", is_flag=True, help="Also emit rewrites the checker could not verify (reported unverified).")
@click.option("--examples", type=click.IntRange(min=1), default=None, help=f"Generated examples per check [default: {_DEFAULTS.examples}].")
@click.option("--seed", type=int, default=None, help=f"Seed of the checker's input generation [default: {_DEFAULTS.seed}].")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help=f"Seconds one check may take [default: {_DEFAULTS.timeout:g}].")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="stdout: the diff (text) or a JSON report.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Also write the JSON report to this file.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors on stderr: no per-rewrite lines, no summary.")
@click.version_option(__version__, prog_name="torchfix")
def cli(
    paths: Sequence[str], apply_: bool, check: bool, select: str | None, ignore: str | None, exclude: Sequence[str],
    explain: str | None, unsafe: bool, examples: int | None, seed: int | None, timeout: float | None, fmt: str,
    report_path: str | None, quiet: bool,
) -> None:
    """Rewrite element-at-a-time PyTorch code into vectorized code, emitting only rewrites the
    equivalence checker verified. Without --apply: a unified diff on stdout, nothing written."""
    from torchfix.diff import unified_diff
    from torchfix.discover import DiscoveryError, discover
    from torchfix.pipeline import process_file
    from torchfix.report import Summary, json_report, print_summary, record_json, record_lines, write_json
    from torchfix.write import atomic_write

    if explain is not None:
        rule = find_rule(explain)
        if rule is None:
            raise click.UsageError(f"unknown rule {explain!r} (known: {', '.join(known_codes())})")
        click.echo(rule.explain())
        return
    if apply_ and check:
        raise click.UsageError("--apply and --check exclude each other")
    try:
        rules = load_rules(_codes(select), _codes(ignore))
        files = discover(list(paths) or ["."], exclude)
    except (ValueError, DiscoveryError) as exc:
        raise click.UsageError(str(exc)) from None

    started = time.perf_counter()
    checker = _LazyChecker(lambda: make_checker(examples, seed, timeout))
    summary = Summary(written=0 if apply_ else None)
    json_files: list[dict] = []
    json_rewrites: list[dict] = []
    stdout = sys.stdout.buffer
    try:
        for path in files:
            display = _display(path)
            result = process_file(path, rules, checker, unsafe=unsafe, display=display)
            write_error = None
            if result.changed and apply_:
                try:
                    atomic_write(path, result.new)  # type: ignore[arg-type]
                    summary.written += 1  # type: ignore[operator]
                except OSError as exc:
                    write_error = f"cannot write: {exc.strerror or exc}; file left unchanged"
                    summary.write_failed += 1
            elif result.changed and fmt == "text":
                # bytes in the file's own encoding and line endings, so the patch applies exactly
                stdout.write(unified_diff(result.original, result.new, display))  # type: ignore[arg-type]
                stdout.flush()
            summary.add(result)
            for line in record_lines(result, show_verified=not quiet):
                if not quiet or line.startswith(f"{result.path}: error:"):
                    _err(line)
            if write_error:
                _err(f"{display}: error: {write_error}")
            if fmt == "json" or report_path:
                json_files.append({"path": display, "changed": result.changed, "error": result.error or write_error})
                json_rewrites.extend(record_json(result))
            # drop the file's bytes: a bulk run keeps only counts and records
            result.original = result.new = None
    finally:
        checker.close()

    seconds = time.perf_counter() - started
    if fmt == "json" or report_path:
        report = json_report(json_files, json_rewrites, seconds)
        if fmt == "json":
            write_json(report, sys.stdout)
        if report_path:
            with open(report_path, "w", encoding="utf-8") as handle:
                write_json(report, handle)
    if not quiet:
        print_summary(summary, seconds, sys.stderr)
    if summary.internal or summary.write_failed:
        problems = []
        if summary.internal:
            problems.append(f"{summary.internal} file(s) hit an internal error")
        if summary.write_failed:
            problems.append(f"{summary.write_failed} file(s) could not be written")
        _err(f"torchfix: internal error: {'; '.join(problems)} (see above)")
        sys.exit(EXIT_ERROR)
    if check and summary.rewritten:
        sys.exit(EXIT_CHANGES)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: runs the command and maps every outcome to an exit code."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="torchfix", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help, --version
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors: click's message, exit 2
        exc.show()
        sys.exit(EXIT_ERROR)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _err("torchfix: interrupted (files already written are complete; the rest are untouched)")
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: stop quietly, and keep Python's exit-time flush of
        # stdout from raising again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except Exception as exc:  # an internal failure: say so, exit 2
        _err(f"torchfix: internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("TORCHFIX_DEBUG"):
            traceback.print_exc()
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)
