"""The ``torchfix`` command line.

Exit codes: 0 success (also a dry run that printed a diff), 1 with ``--check`` when a rewrite
would be made, 2 for a usage error or an internal error. A file that cannot be read, decoded or
parsed is reported and skipped; it does not change the exit code.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Sequence

import click

from torchfix import __version__

EXIT_OK, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


def make_checker(examples: int, seed: int, timeout: float):  # noqa: ANN201 - tests replace this
    """The checker for a run; started lazily by the pipeline, only when a check is needed."""
    from equivalence.checker import Checker, CheckSettings, available_devices

    return Checker(CheckSettings(examples=examples, seed=seed, timeout=timeout, devices=available_devices()))


def _codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip() for c in text.split(",") if c.strip()]


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


class _LazyChecker:
    def __init__(self, factory) -> None:  # noqa: ANN001
        self._factory = factory
        self._checker = None

    def __call__(self):  # noqa: ANN204
        if self._checker is None:
            self._checker = self._factory()
        return self._checker

    def close(self) -> None:
        if self._checker is not None and hasattr(self._checker, "close"):
            self._checker.close()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--apply", "apply_", is_flag=True, help="Write the verified rewrites in place.")
@click.option("--check", is_flag=True, help="Exit 1 if any rewrite would be made (prints the diff, writes nothing).")
@click.option("--select", metavar="CODES", help="Only these rules (comma list, prefixes allowed).")
@click.option("--ignore", metavar="CODES", help="Not these rules (comma list, prefixes allowed).")
@click.option("--exclude", metavar="GLOB", multiple=True, help="Skip paths matching this gitignore-style pattern.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.option("--unsafe", is_flag=True, help="Also emit rewrites the checker could not verify (marked unverified).")
@click.option("--examples", default=100, show_default=True, help="Hypothesis examples per check.")
@click.option("--seed", default=0, show_default=True, help="Seed of the checker's input generation.")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds one check may take.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="stdout: the diff (text) or a JSON report.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Also write the JSON report to this file.")
@click.option("-q", "--quiet", is_flag=True, help="No per-rewrite lines and no summary on stderr.")
@click.version_option(__version__, prog_name="torchfix")
def cli(
    paths: Sequence[str], apply_: bool, check: bool, select: str | None, ignore: str | None, exclude: Sequence[str],
    explain: str | None, unsafe: bool, examples: int, seed: int, timeout: float, fmt: str,
    report_path: str | None, quiet: bool,
) -> None:
    """Find element-at-a-time PyTorch code and rewrite it into vectorized code, emitting only
    rewrites the equivalence checker verified. Without --apply, prints a unified diff."""
    from codemods.registry import RULES_BY_CODE, select_rules
    from torchfix.diff import unified_diff
    from torchfix.discover import DiscoveryError, discover
    from torchfix.pipeline import FileResult, process_file
    from torchfix.report import record_lines, summary_table, write_json
    from torchfix.write import atomic_write

    if explain:
        rule = RULES_BY_CODE.get(explain.strip().upper())
        if rule is None:
            raise click.UsageError(f"unknown rule {explain!r} (known: {', '.join(RULES_BY_CODE)})")
        click.echo(rule.explain())
        return
    if apply_ and check:
        raise click.UsageError("--apply and --check exclude each other")
    try:
        rules = select_rules(_codes(select), _codes(ignore))
        files = discover(list(paths) or ["."], exclude)
    except (ValueError, DiscoveryError) as exc:
        raise click.UsageError(str(exc)) from None

    started = time.perf_counter()
    checker = _LazyChecker(lambda: make_checker(examples, seed, timeout))
    results: list[FileResult] = []
    stdout = sys.stdout.buffer
    try:
        for path in files:
            result = process_file(path, rules, checker, unsafe=unsafe, display=_display(path))
            results.append(result)
            if not quiet:
                for line in record_lines([result]):
                    click.echo(line, err=True)
            if result.changed and fmt == "text" and not apply_:
                stdout.write(unified_diff(result.original, result.new, result.path))
                stdout.flush()
    finally:
        checker.close()

    written = None
    if apply_:
        written = 0
        try:
            for result in results:
                if result.changed:
                    atomic_write(Path(result.path), result.new)
                    written += 1
        except KeyboardInterrupt:
            click.echo(f"torchfix: interrupted: {written} file(s) written, the rest untouched", err=True)
            sys.exit(130)
    seconds = time.perf_counter() - started
    if fmt == "json":
        write_json(results, seconds, sys.stdout)
    if report_path:
        with open(report_path, "w", encoding="utf-8") as handle:
            write_json(results, seconds, handle)
    if not quiet:
        click.echo(summary_table(results, seconds, written), err=True)
    if check and any(r.changed for r in results):
        sys.exit(EXIT_CHANGES)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="torchfix", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("torchfix: aborted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    except Exception as exc:  # an internal failure: say so, exit 2
        click.echo(f"torchfix: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)
