"""The ``torchfix`` command line.

Exit codes:
  0  success: a dry run (also when it printed a diff), an ``--apply`` run, a clean ``--check``;
  1  only with ``--check``: some file would be rewritten;
  2  a usage error (bad option, unknown rule code, missing path), or an internal failure: a crash in
     torchfix itself, a rewrite whose output did not parse, or a rewritten file that could not be
     written (a worker process that died counts too).
  130 interrupted (Ctrl-C or SIGTERM): while processing nothing is written; while writing, every
     file is either unchanged or fully rewritten and the message says how many were written.
A file that cannot be read, decoded or parsed is reported (``path: error: reason``), left alone,
and does not change the exit code.

Tests replace the module-level hooks :func:`load_rules`, :func:`find_rule`, :func:`documented_rules`
and :func:`make_checker` (monkeypatch) to run the CLI with fake rules and a fake checker. With
``--jobs`` > 1 the checker hook and the rules travel to the worker processes by pickling: a hook
that does not pickle (a closure) keeps the run in this process.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import stat
import sys
import time
import traceback
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

import click

from torchfix.equivalence.checker import CheckSettings  # stdlib-only module: cheap, and no torch
from torchfix.equivalence.kernel import Outcome
from torchfix import __version__

_DEFAULTS = CheckSettings()

if TYPE_CHECKING:
    from torchfix.codemods.base import Rule
    from torchfix.limits import FileLimits
    from torchfix.pipeline import CheckerLike

EXIT_OK, EXIT_CHANGES, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


# --- hooks (tests monkeypatch these) -------------------------------------------------------------
# codemods/ and equivalence/ are imported inside them: ``torchfix --version`` / ``--help`` stay
# fast, and torch is imported only by a checker worker that actually runs a check.


def load_rules(select: list[str] | None, ignore: list[str] | None) -> list[type[Rule]]:
    """The rules of this run; ValueError for an unknown code (a usage error)."""
    from torchfix.codemods.registry import select_rules

    return select_rules(select, ignore)


def find_rule(code: str) -> type[Rule] | None:
    """The rule ``--explain CODE`` documents, or None."""
    from torchfix.codemods.registry import ALL_RULES

    wanted = code.strip().upper()
    return next((rule for rule in ALL_RULES if rule.code == wanted), None)


def documented_rules() -> list[type[Rule]]:
    """Every rule, for SARIF's ``tool.driver.rules``."""
    from torchfix.codemods.registry import ALL_RULES

    return list(ALL_RULES)


def known_codes() -> list[str]:
    from torchfix.codemods.registry import ALL_RULES

    return [rule.code for rule in ALL_RULES]


def make_checker(examples: int | None, seed: int | None, timeout: float | None, measure: bool | None = None) -> CheckerLike:
    """The checker of a run. Called at most once, when the first candidate needs checking."""
    from torchfix.equivalence.checker import Checker, available_devices

    # options left unset keep the checker's own defaults (one source of truth)
    given = {"examples": examples, "seed": seed, "timeout": timeout, "measure": measure}
    settings = CheckSettings(**{k: v for k, v in given.items() if v is not None}, devices=available_devices())
    return Checker(settings)


def _file_cache(run_settings: dict, limits: FileLimits, details: bool):  # noqa: ANN202 - a FileResultCache or None
    """The run's cache of whole files' results (``torchfix.file_cache``), where the verdict cache is on."""
    from torchfix.equivalence.cache import default_cache_dir
    from torchfix.file_cache import FileResultCache

    directory = default_cache_dir()
    if directory is None:
        return None
    return FileResultCache(directory, {**run_settings, "details": details, "limits": asdict(limits)})


def make_cluster_checker(
    address: str, examples: int | None, seed: int | None, timeout: float | None, measure: bool | None = None
):  # noqa: ANN201 - a torchfix.cluster.ClusterChecker (Dask is imported only here)
    """The checker of a ``--scheduler`` run: connects to the scheduler (ClusterError if it cannot)
    and checks on the devices the cluster offers."""
    from torchfix.cluster import ClusterChecker, cluster_settings, connect

    given = {"examples": examples, "seed": seed, "timeout": timeout, "measure": measure}
    client = connect(address)
    settings = cluster_settings(client, CheckSettings(**{k: v for k, v in given.items() if v is not None}))
    return ClusterChecker(client, settings, address=address)


def isolation_notices() -> list[str]:
    """What the run must say once on stderr about how scanned code is isolated: no OS sandbox
    (``equivalence.sandbox``), a cache directory refused as not private (``equivalence.cache``).
    Raises ``SandboxUnavailable`` under ``TORCHFIX_SANDBOX=require`` when there is no sandbox."""
    from torchfix.equivalence.cache import default_cache_problem
    from torchfix.equivalence.sandbox import isolation

    notices = [isolation().warning(), default_cache_problem()]
    return [n for n in notices if n]


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


def _err(line: str) -> None:
    click.echo(line, err=True)


#: the summary's line when the checks of a local run had no GPU to run on
NO_LOCAL_GPU_NOTE = "no GPU on this machine: every check ran on the CPU only"
#: ... and when there is one, but every check was decided on the CPU before its CUDA leg
NO_GPU_LEG_NOTE = "no check reached the GPU: each was decided (rejected, or not checkable) on the CPU first"


def _resume_hint(journal) -> None:  # noqa: ANN001 - a torchfix.journal.Journal or None
    if journal is not None:
        _err(f"torchfix: the files decided so far are in {journal.path}: run again with --resume {journal.path} to go on")


class _Review:
    """``--interactive``: asks about each rewrite before it is emitted, like ``git add -p``."""

    PROMPT = "Apply this rewrite [y,n,a,q,?]"
    HELP = "y - apply this rewrite\nn - skip it\na - apply this and every remaining rewrite\nq - quit: skip this and every remaining rewrite\n? - this help"

    def __init__(self, color: bool) -> None:
        self.color = color
        self.apply_all = False
        self.quit = False

    def __call__(self, record) -> bool:  # noqa: ANN001 - a RewriteRecord
        from torchfix.formats import color_diff

        if self.quit:
            return False
        if self.apply_all:
            return True
        head = f"{record.path}:{record.line}:{record.column}: {record.rule} {record.outcome.value}: {record.message}"
        click.echo(click.style(head, bold=True) if self.color else head)
        click.echo(f"  rewrite: {record.candidate}")
        verdict = record.verdict.reason if record.verdict is not None else record.reason
        click.echo(f"  checker: {record.outcome.value}: {verdict}" + ("  (NOT verified: --unsafe)" if record.outcome is not Outcome.VERIFIED else ""))
        if record.verdict is not None and (record.verdict.timings or record.verdict.timing_note):
            click.echo(f"  speed:   {record.verdict.speed_text() or record.verdict.timing_note}")
        diff = (record.diff or "").encode("utf-8", "replace")
        sys.stdout.flush()
        sys.stdout.buffer.write(color_diff(diff) if self.color else diff)
        sys.stdout.buffer.flush()
        while True:
            answer = click.prompt(self.PROMPT, default="", show_default=False, prompt_suffix="? ").strip().lower()[:1]
            if answer == "y":
                return True
            if answer == "n":
                return False
            if answer == "a":
                self.apply_all = True
                return True
            if answer == "q":
                self.quit = True
                return False
            click.echo(self.HELP)


# --- the command ---------------------------------------------------------------------------------


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--apply", "apply_", is_flag=True, help="Write the verified rewrites in place (atomically).")
@click.option("--check", is_flag=True, help="Exit 1 if any rewrite would be made; prints the diff, writes nothing.")
@click.option("-i", "--interactive", is_flag=True, help="Review each rewrite (apply / skip / all / quit), then write the accepted ones.")
@click.option("--select", metavar="CODES", help="Only these rules (comma list; prefixes such as TFV00 allowed).")
@click.option("--ignore", metavar="CODES", help="Not these rules (comma list; prefixes allowed).")
@click.option("--exclude", metavar="GLOB", multiple=True, help="Skip walked paths matching this gitignore-style pattern.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.option("--unsafe/--no-unsafe", default=None, help="Also emit rewrites the checker could not verify (marked unverified). Never the default.")
@click.option("--allow-slower/--no-allow-slower", default=None,
              help="Also emit the verified rewrites the speed decision withholds: measured clearly slower (below 0.5x), or of a speed-gated form (TFV004's device accumulator) not measured clearly faster (2x).")
@click.option("--measure/--no-measure", default=None,
              help="Time each verified rewrite, old vs new, at realistic sizes and report the speedup [default: on].")
@click.option("--examples", type=click.IntRange(min=1), default=None, help=f"Generated examples per check [default: {_DEFAULTS.examples}].")
@click.option("--seed", type=int, default=None, help=f"Seed of the checker's input generation [default: {_DEFAULTS.seed}].")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Wall-clock seconds one check may take on each device (a check on the CPU and CUDA may take twice it); the speed measurement of a verified rewrite has its own budget [default: {_DEFAULTS.timeout:g}].")
@click.option("--max-file-size", metavar="SIZE", default=None,
              help="Skip larger files unread (bytes, or a number with K, M or G) [default: 2M; 0: no limit].")
@click.option("--file-budget", metavar="SECONDS", type=click.FloatRange(min=0), default=None,
              help="Seconds one file may take, all its checks included; then it is reported 'gave up' and left alone [default: 300; 0: no limit].")
@click.option("--file-memory", metavar="MB", type=click.IntRange(min=0), default=None,
              help="Megabytes this process may grow by while processing one file; then it gives up on the file [default: 2048; 0: no limit].")
@click.option("--max-candidates", metavar="N", type=click.IntRange(min=0), default=None,
              help="Candidate rewrites checked per file; a file with more is reported 'gave up' [default: 200; 0: no limit].")
@click.option("--force", is_flag=True, help="With --apply or --interactive: also rewrite read-only files (they are reported and left alone otherwise).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: the CPU count; 1: in this process].")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True,
              help="stdout: the diff (text), a JSON report, a SARIF 2.1.0 log, or GitHub workflow annotations.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Also write the JSON report to this file (kept as a journal while the run goes on: see --resume).")
@click.option("--resume", "resume_path", type=click.Path(dir_okay=False), metavar="REPORT",
              help="Go on with the run that left this --report journal: its decided files are not checked again.")
@click.option("--repos", "repos_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also scan the repositories listed in FILE (one path a line); the summary has a line per repository.")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="Check and measure on the Dask cluster of this scheduler (tcp://host:8786); parsing stays here.")
@click.option("--report-unused-suppressions", "report_unused", is_flag=True, help="List `# torchfix: ignore` comments that silenced nothing (--check fails on them).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour: auto = on a terminal, unless NO_COLOR is set.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors on stderr: no per-rewrite lines, no progress, no summary.")
@click.option("-v", "--show-skipped", "show_skipped", is_flag=True,
              help="Also list the proposals skipped before any check, with why (by default only the summary counts them).")
@click.version_option(__version__, prog_name="torchfix", message="%(prog)s (torchfix-codemod) %(version)s")
def cli(
    paths: Sequence[str], apply_: bool, check: bool, interactive: bool, select: str | None, ignore: str | None,
    exclude: Sequence[str], explain: str | None, unsafe: bool | None, allow_slower: bool | None, measure: bool | None,
    examples: int | None, seed: int | None, timeout: float | None,
    max_file_size: str | None, file_budget: float | None, file_memory: int | None, max_candidates: int | None, force: bool,
    jobs: int | None, fmt: str, report_path: str | None, resume_path: str | None, repos_file: str | None,
    scheduler: str | None, report_unused: bool, color: str, quiet: bool, show_skipped: bool,
) -> None:
    """Rewrite element-at-a-time PyTorch code into vectorized code, emitting only rewrites the
    equivalence checker verified. Without --apply: a unified diff on stdout, nothing written.

    Settings come from [tool.torchfix] in the nearest pyproject.toml; flags override them."""
    from torchfix import config as config_module
    from torchfix.diff import unified_diff
    from torchfix.discover import DiscoveryError, discover
    from torchfix.limits import FileLimits, parse_size
    from torchfix.formats import color_diff, github_annotations, sarif_report, use_color
    from torchfix.parallel import Job, Settings, effective_jobs, parallel, picklable, serial
    from torchfix.progress import Progress
    from torchfix.report import Summary, json_report, print_summary, record_json, record_lines, unused_json, write_json
    from torchfix.bulk import InOrder, RepoSummaries
    from torchfix.cluster import NO_GPU_NOTE, ClusterError, close_client, describe_cluster, files_in_flight, run_on_cluster
    from torchfix.pipeline import FileResult

    if explain is not None:
        rule = find_rule(explain)
        if rule is None:
            raise click.UsageError(f"unknown rule {explain!r} (known: {', '.join(known_codes())})")
        click.echo(rule.explain())
        return
    if apply_ and check:
        raise click.UsageError("--apply and --check exclude each other")
    if interactive and check:
        raise click.UsageError("--interactive and --check exclude each other")
    if resume_path is not None and interactive:
        raise click.UsageError("--resume does not combine with --interactive (answers are not kept)")
    writes = apply_ or interactive

    # --- configuration, rules and files --------------------------------------------------------
    config_module.clear_cache()
    roots = list(paths)
    try:
        if repos_file is not None:
            from torchfix.bulk import ReposFileError, read_repos_file

            try:
                roots += read_repos_file(repos_file)
            except ReposFileError as exc:
                raise click.UsageError(str(exc)) from None
        roots = roots or ["."]
        run_config = config_module.find_config(roots[0])
        rule_sets: dict[tuple, list] = {}

        def rules_for(cfg: config_module.Config) -> list:
            sel = _codes(select) if select is not None else (list(cfg.select) if cfg.select is not None else None)
            ign = _codes(ignore) if ignore is not None else (list(cfg.ignore) if cfg.ignore is not None else None)
            key = (tuple(sel) if sel is not None else None, tuple(ign) if ign is not None else None)
            if key not in rule_sets:
                rule_sets[key] = load_rules(sel, ign)
            return rule_sets[key]

        rules_for(run_config)  # a bad selector is a usage error even when no file is found
        job_list: list[Job] = []
        job_repos: list[str] = []  # the PATH (repository) each job was found under
        seen: set[str] = set()
        for raw in roots:
            for file in discover([raw], exclude):
                real = os.path.realpath(file)
                if real in seen:
                    continue
                seen.add(real)
                cfg = config_module.find_config(file)
                if cfg.excluded(file):
                    continue
                rules = rules_for(cfg)
                dropped = cfg.ignored_codes(file)
                if dropped:
                    rules = [r for r in rules if not any(r.code.startswith(c) for c in dropped)]
                job_list.append(Job(str(file), _display(file), tuple(rules)))
                job_repos.append(raw)
    except (ValueError, DiscoveryError, config_module.ConfigError) as exc:
        raise click.UsageError(str(exc)) from None

    unsafe = bool(unsafe if unsafe is not None else run_config.unsafe)
    allow_slower = bool(allow_slower if allow_slower is not None else run_config.allow_slower)
    measure = measure if measure is not None else run_config.measure
    examples = examples if examples is not None else run_config.examples
    seed = seed if seed is not None else run_config.seed
    timeout = timeout if timeout is not None else run_config.timeout
    jobs = jobs if jobs is not None else run_config.jobs
    limits = _file_limits(max_file_size, file_budget, file_memory, max_candidates, run_config, FileLimits, parse_size)
    if interactive:  # the time a person takes to answer is not the file's
        limits = replace(limits, seconds=None)
    scheduler = scheduler if scheduler is not None else run_config.scheduler
    report_path = report_path or resume_path

    stdout_color = use_color(color, sys.stdout)
    stderr_color = use_color(color, sys.stderr)
    # the hook as it is now (a test may have replaced it); workers get it by pickling, so a hook
    # that does not pickle (a closure) keeps the run in this process
    factory = functools.partial(make_checker, examples, seed, timeout) if measure is None else functools.partial(
        make_checker, examples, seed, timeout, measure
    )
    want_records = fmt != "text" or bool(report_path)
    # what changes a file's result besides its bytes: the journal's identity and the file cache's key
    run_settings = {
        "unsafe": unsafe, "allow_slower": allow_slower, "report_unused": report_unused,
        "measure": _DEFAULTS.measure if measure is None else measure, "examples": examples or _DEFAULTS.examples,
        "seed": _DEFAULTS.seed if seed is None else seed, "timeout": timeout or _DEFAULTS.timeout,
    }
    settings = Settings(
        factory, unsafe, report_unused, allow_slower, limits, details=want_records or interactive,
        results=_file_cache(run_settings, limits, want_records or interactive) if not (interactive or scheduler) else None,
    )
    review = _Review(stdout_color) if interactive else None
    workers = 1 if interactive else effective_jobs(jobs, len(job_list))
    if workers > 1 and not picklable(settings, {r for job in job_list for r in job.rules}):
        workers = 1  # hooks replaced by something that cannot go to a worker (tests): stay here

    started = time.perf_counter()
    summary = Summary(written=0 if writes else None, skipped_hidden=not show_skipped)
    json_files: list[dict] = []
    json_rewrites: list[dict] = []
    json_unused: list[dict] = []
    pending: list[tuple[str, str, bytes]] = []  # (path, display, new bytes) for --apply
    stdout = sys.stdout.buffer
    repo_summaries = RepoSummaries(roots)

    # --- the journal (--report, --resume) and the cluster (--scheduler) ------------------------
    journal = None
    resumed: dict[int, FileResult] = {}
    if report_path:
        from torchfix import journal as journal_module

        identity = journal_module.run_identity(run_settings)
        carried = []
        if resume_path:
            try:
                entries = journal_module.load(resume_path, identity)
            except journal_module.ResumeError as exc:
                raise click.UsageError(str(exc)) from None
            for index, job in enumerate(job_list):
                entry = entries.get(job.display)
                earlier = entry and journal_module.resumed_result(entry, job.path, [r.code for r in job.rules])
                if earlier:
                    resumed[index] = earlier
                    carried.append(entry)
        try:
            journal = journal_module.Journal(report_path, identity, carried)
        except OSError as exc:
            raise click.UsageError(f"--report {report_path}: cannot write: {exc.strerror or exc}") from None
    cluster = None
    if job_list and len(resumed) < len(job_list) and scheduler:
        from torchfix.equivalence.cache import default_cache_problem

        try:
            cluster = make_cluster_checker(scheduler, examples, seed, timeout, measure)
        except ClusterError as exc:
            _err(f"torchfix: error: {exc}")
            sys.exit(EXIT_ERROR)
        for notice in filter(None, [default_cache_problem()]):  # the sandbox is the workers' (see cluster.py)
            _err(notice)
        if not quiet:
            _err(f"torchfix: checking on the Dask cluster at {scheduler}: {describe_cluster(cluster.client)}")
    elif job_list:
        from torchfix.equivalence.sandbox import SandboxUnavailable

        try:
            for notice in isolation_notices():
                _err(notice)
        except SandboxUnavailable as exc:
            _err(f"torchfix: error: {exc}")
            sys.exit(EXIT_ERROR)

    def process(jobs: list[Job]):  # noqa: ANN202 - the results of ``jobs``, in their order
        if cluster is not None and review is None:
            return run_on_cluster(jobs, settings, cluster, files_in_flight(cluster.client, len(jobs)))
        if cluster is not None:  # --interactive: one file at a time, each answer before the next file
            return serial(jobs, replace(settings, checker_factory=cluster), review)
        return serial(jobs, settings, review) if workers == 1 else parallel(jobs, settings, workers)

    progress = Progress(len(job_list), sys.stderr, enabled=not quiet, color=stderr_color)
    results = InOrder(job_list, resumed, process)
    processed = 0

    # --- processing: nothing is written yet ----------------------------------------------------
    try:
        for index, (job, result) in enumerate(zip(job_list, results)):
            processed += 1
            if journal is not None and index not in resumed:
                journal.record(result, [r.code for r in job.rules])
            repo_summaries.add(job_repos[index], result)
            if cluster is not None:
                for notice in cluster.pending_notices():
                    progress.echo(notice)
            read_only = result.changed and writes and not force and _read_only(job.path)
            if read_only:
                pass  # a rename would replace it all the same: leave it, and say so (below)
            elif result.changed and writes:
                pending.append((job.path, result.path, result.new))  # type: ignore[arg-type]
            elif result.changed and fmt == "text":
                # bytes in the file's own encoding and line endings, so the patch applies exactly
                diff = unified_diff(result.original, result.new, result.path)  # type: ignore[arg-type]
                stdout.write(color_diff(diff) if stdout_color else diff)
                stdout.flush()
            summary.add(result)
            summary.read_only += bool(read_only)
            for line in record_lines(result, show_verified=not quiet, show_skipped=show_skipped):
                # --quiet keeps the lines about whole files (errors, skipped, gave up)
                if not quiet or line.startswith(f"{result.path}: ") or "unused suppression" in line:
                    progress.echo(line)
            if read_only:
                progress.echo(f"{result.path}: skipped: {READ_ONLY_REASON}")
            if want_records:
                json_files.append({
                    "path": result.path, "changed": result.changed,
                    "error": READ_ONLY_REASON if read_only else result.error,
                    "status": "read-only" if read_only else result.status.value,
                })
                json_rewrites.extend(record_json(result))
                json_unused.extend(unused_json(result))
            # drop the file's bytes: a bulk run keeps only counts and records
            result.original = result.new = None
            progress.advance()
            if review is not None and review.quit:
                break
    except KeyboardInterrupt:
        progress.close()
        _err(f"torchfix: {_stopped_by()} while processing ({processed} of {len(job_list)} files done): nothing was written")
        _resume_hint(journal)
        sys.exit(_interrupted_exit_code())
    except ClusterError as exc:
        progress.close()
        _err(f"torchfix: error: {exc} ({processed} of {len(job_list)} files decided): nothing was written")
        _resume_hint(journal)
        sys.exit(EXIT_ERROR)
    finally:
        progress.close()
        results.close()  # stops the pool or the cluster threads, closes the checker(s)
        if journal is not None:
            journal.close()
        if cluster is not None:
            close_client(cluster.client)
    if cluster is not None:
        summary.gpu_note = None if "cuda" in cluster.settings.devices else NO_GPU_NOTE
    elif summary.devices and "cuda" not in summary.devices:
        from torchfix.equivalence.checker import available_devices

        summary.gpu_note = NO_GPU_LEG_NOTE if "cuda" in available_devices() else NO_LOCAL_GPU_NOTE

    # --- writing: every file is either as it was or fully rewritten -----------------------------
    if pending:
        from torchfix import write as write_module

        done = 0
        try:
            for path, display, new in pending:
                # a signal now is only noted: the file is written completely (or not at all, if
                # it came first), then the loop stops, so the count below is exact
                with _SIGNALS.deferred():
                    if _SIGNALS.received is not None:
                        break
                    try:
                        write_module.atomic_write(path, new)
                        done += 1
                        summary.written += 1  # type: ignore[operator]
                    except OSError as exc:
                        summary.write_failed += 1
                        _err(f"{display}: error: cannot write: {exc.strerror or exc}; file left unchanged")
                        for entry in json_files:
                            if entry["path"] == display:
                                entry["error"] = f"cannot write: {exc.strerror or exc}; file left unchanged"
        except KeyboardInterrupt:  # raised by the write itself: it left that file as it was
            pass
        if _SIGNALS.received is not None or done + summary.write_failed < len(pending):
            _err(
                f"torchfix: {_stopped_by()} while writing: {done} of {len(pending)} rewritten files written; "
                f"the other {len(pending) - done} are unchanged (each file is either unchanged or completely rewritten)"
            )
            sys.exit(_interrupted_exit_code())

    seconds = time.perf_counter() - started
    if want_records:
        report = json_report(json_files, json_rewrites, seconds, summary, json_unused)
        report["repositories"] = repo_summaries.json()
        if fmt == "json":
            write_json(report, sys.stdout)
        if journal is not None:
            text = io.StringIO()
            write_json(report, text)
            journal.finish(text.getvalue())  # the complete report replaces the journal, atomically
    if fmt == "sarif":
        known = documented_rules()
        known += [r for r in dict.fromkeys(r for job in job_list for r in job.rules) if r.code not in {k.code for k in known}]
        write_json(sarif_report(known, json_rewrites, json_files, __version__, successful=not summary.internal), sys.stdout)
    elif fmt == "github":
        for line in github_annotations(json_rewrites, json_files):
            click.echo(line)
    if not quiet:
        print_summary(summary, seconds, sys.stderr, color=stderr_color if color != "auto" else (False if os.environ.get("NO_COLOR") else None))
        # one line per repository when several were given; files named one by one are no repositories
        if sum(os.path.isdir(repo) for repo in repo_summaries.by_repo) > 1:
            _err("repositories:")
            for line in repo_summaries.lines():
                _err(f"  {line}")
    if summary.internal or summary.write_failed:
        problems = []
        if summary.internal:
            problems.append(f"{summary.internal} file(s) hit an internal error")
        if summary.write_failed:
            problems.append(f"{summary.write_failed} file(s) could not be written")
        _err(f"torchfix: internal error: {'; '.join(problems)} (see above)")
        sys.exit(EXIT_ERROR)
    if check and (summary.rewritten or (report_unused and summary.unused_suppressions)):
        sys.exit(EXIT_CHANGES)


class _Signals:
    """SIGINT and SIGTERM (a CI job cancelled, ``timeout``) stop a run alike: the first one raises
    KeyboardInterrupt -- the worker pool and the checkers are shut down, nothing is written -- or,
    while a file is being written, is only noted, so that the write completes and the count of
    written files is exact. A second signal while the first is being handled is ignored: the
    shutdown it would cut short only kills processes and prints the summary line."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._deferring = False

    def handle(self, signum: int, frame: object) -> None:
        first = self.received is None
        if first:
            self.received = signum
        if first and not self._deferring:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False

    def install(self) -> None:
        self.received = None
        self._set(self.handle)

    def settle(self) -> None:
        """The run's outcome is decided: the interpreter's shutdown that follows (pools joined,
        checkers closed, modules torn down) must not be turned into a death by signal -- Python
        restores the default handlers part way through it, so a handler cannot cover it all. Both
        signals are blocked instead (they stay pending and die with the process), and a watchdog
        ends a shutdown that hangs after :data:`SHUTDOWN_SECONDS`, printing where it hung, so the
        process never becomes one only SIGKILL can stop."""
        import faulthandler
        import signal

        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        except (AttributeError, ValueError, OSError):  # no pthread_sigmask (Windows)
            return
        try:
            faulthandler.dump_traceback_later(SHUTDOWN_SECONDS, exit=True)
        except (ValueError, RuntimeError, OSError):  # stderr has no file descriptor
            pass

    @staticmethod
    def _set(handler: object) -> None:
        import signal

        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                signal.signal(signum, handler)  # type: ignore[arg-type]
            except ValueError:  # not the main thread
                pass


_SIGNALS = _Signals()
#: how long the interpreter's shutdown may take once a run's outcome is decided
SHUTDOWN_SECONDS = 60


def _stopped_by() -> str:
    import signal

    return "terminated (SIGTERM)" if _SIGNALS.received == signal.SIGTERM else "interrupted"


def _interrupted_exit_code() -> int:
    """128 + the signal's number, as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + _SIGNALS.received if _SIGNALS.received is not None else EXIT_INTERRUPTED


def _read_only(path: str) -> bool:
    """Whether the file behind ``path`` is read-only: no write permission for us, or (for root,
    whom permissions do not stop) no write bit at all."""
    try:
        target = os.path.realpath(path)
        mode = os.stat(target).st_mode
    except OSError:
        return False  # the write will say what is wrong
    return not os.access(target, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


READ_ONLY_REASON = "read-only file: not rewritten (--force rewrites it)"


def _file_limits(max_file_size, file_budget, file_memory, max_candidates, cfg, file_limits, parse_size):  # noqa: ANN001, ANN202
    """The run's per-file limits: flags over ``[tool.torchfix]`` over the defaults; 0 is no limit."""
    defaults = file_limits()
    if max_file_size is not None:
        try:
            size: int | None = parse_size(max_file_size)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--max-file-size") from None
    else:
        size = cfg.max_file_size if cfg.max_file_size is not None else defaults.max_bytes
    seconds = file_budget if file_budget is not None else (cfg.file_budget if cfg.file_budget is not None else defaults.seconds)
    memory = file_memory if file_memory is not None else (cfg.file_memory if cfg.file_memory is not None else defaults.memory_mb)
    candidates = max_candidates if max_candidates is not None else (
        cfg.max_candidates if cfg.max_candidates is not None else defaults.max_candidates
    )
    return file_limits(size or None, seconds or None, memory or None, candidates or None)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: runs the command and maps every outcome to an exit code.

    Called without ``argv`` (the console script, ``python -m torchfix``) it owns the process's
    SIGINT and SIGTERM (:class:`_Signals`); once the outcome is decided, a signal that lands while
    the interpreter shuts down changes nothing (:meth:`_Signals.settle`)."""
    owns_signals = argv is None
    if owns_signals:
        _SIGNALS.install()
    try:
        code = _run(argv)
    except KeyboardInterrupt:  # the first signal landed while another outcome was being handled
        _err(f"torchfix: {_stopped_by()} (files already written are complete; the rest are untouched)")
        code = _interrupted_exit_code()
    if owns_signals:
        _SIGNALS.settle()
    sys.exit(code)


def _run(argv: Sequence[str] | None) -> int:
    """The command's exit code; every outcome but a signal in an exception handler ends here."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="torchfix", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help, --version
        return exc.exit_code
    except click.ClickException as exc:  # usage errors: click's message, exit 2
        exc.show()
        return EXIT_ERROR
    except (click.exceptions.Abort, KeyboardInterrupt):
        _err(f"torchfix: {_stopped_by()} (files already written are complete; the rest are untouched)")
        return _interrupted_exit_code()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: stop quietly, and keep Python's exit-time flush of
        # stdout from raising again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # an internal failure: say so, exit 2
        _err(f"torchfix: internal error: {type(exc).__name__}: {exc}")
        from torchfix.equivalence.sandbox import debugging

        if debugging():
            traceback.print_exc()
        return EXIT_ERROR
    return EXIT_OK
