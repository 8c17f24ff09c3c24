"""The proof obligation a rewrite carries: a self-contained verification kernel.

These are the only types the codemods floor may import from the checker. A kernel is plain data
(strings, tuples, enums) so it can be pickled into a worker process, hashed into a cache key and
printed in a report.

A kernel is two statement snippets, ``old`` and ``new``, run one after the other on clones of the
same generated inputs. Each snippet reads the names listed in ``inputs`` and leaves the names listed
in ``outputs``; the checker compares those outputs, and every input after the run (to catch a
missing or extra in-place write).

An input may be of several *kinds* (:class:`Kind`): the pass lists every kind its static evidence
allows (``InputSpec.kinds``), and the checker tries each of them, admitting those the old code runs
on -- exactly as it admits ranks and dtypes. No kind is assumed away: code that holds Python lists
is checked with Python lists.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import asdict, dataclass, field

#: dtypes the checker draws by default, in the order it prefers them.
DEFAULT_DTYPES: tuple[str, ...] = ("float32", "float64", "int64", "int32", "bool")
#: dtypes an input of unstated dtype may also hold, tried by the checker's dtype coverage (each in
#: an admitted signature, where the old code takes it) rather than drawn in the sample: they are
#: rarer, and where a rewrite differs on them it differs on its first input (a Python number
#: beside an int8 sample stays int8; a batch of them as int64 promotes it)
NARROW_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "int16", "int8", "uint8")
FLOAT_DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16")
INT_DTYPES: tuple[str, ...] = ("int64", "int32", "int16", "int8", "uint8")


class Kind(str, enum.Enum):
    """What a kernel input is. Each kind is one family of values the checker builds.

    ``ranks`` and ``dtypes`` of an :class:`InputSpec` shape the array kinds (TENSOR, NDARRAY); the
    number kinds inside containers follow ``dtypes`` too (float dtypes: Python floats, integer
    dtypes: Python ints, bool: Python bools). ``index`` / ``nonnegative`` / ``count`` shape the
    values of every kind.
    """

    #: a ``torch.Tensor`` of one of the spec's ranks and dtypes
    TENSOR = "tensor"
    #: a ``numpy.ndarray`` of one of the spec's ranks and dtypes (bfloat16 has no NumPy dtype),
    #: drawn with the same values, sizes and specials as tensors
    NDARRAY = "ndarray"
    #: a Python ``list`` of Python numbers -- all ``int``, all ``float`` or all ``bool`` -- whose
    #: length comes from the example's shared size pool (a per-step input of kind TENSOR is a
    #: list of tensors already: ``per_step``)
    LIST = "list"
    #: a Python ``int``
    INT = "int"
    #: a Python ``float``
    FLOAT = "float"
    #: a Python ``bool``
    BOOL = "bool"
    #: a NumPy scalar: ``numpy.float64``, ``numpy.int64`` or ``numpy.float32`` (``float64`` is a
    #: subclass of ``float`` that prints and compares like one, and is still not one)
    NUMPY_SCALAR = "numpy scalar"
    #: a ``dict`` with ``str`` keys -- the spec's ``keys`` (the code subscripts with them) and a
    #: pooled number of others -- whose values are Python numbers or float32 tensors of rank 0 or 1
    DICT = "dict"
    #: a one-shot iterator (a generator) over Python numbers or float32 tensors of rank 0 or 1;
    #: the old and the new code each get their own, over the same values, and what is left in it
    #: after the run is compared too
    ITERATOR = "iterator"
    #: nothing is known: every kind in :data:`UNKNOWN_KINDS` (the old code's domain decides)
    ANY = "any"
    #: a name the checker cannot build (a model, a helper defined elsewhere): a deterministic
    #: stand-in is bound instead, shared by the old and the new snippet. Never mixed with others.
    OPAQUE = "opaque"


#: the kinds a name about which nothing is known may hold. DICT and ITERATOR are left out: a pass
#: lists them where the code uses a name as one (string keys, ``.values()``, iteration only)
UNKNOWN_KINDS: tuple[Kind, ...] = (
    Kind.TENSOR, Kind.NDARRAY, Kind.LIST, Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NUMPY_SCALAR,
)
#: every kind the checker builds values of, in the order signatures list them (tensors first:
#: the common case, and the one timed first)
BUILDABLE_KINDS: tuple[Kind, ...] = UNKNOWN_KINDS + (Kind.DICT, Kind.ITERATOR)
#: the Python number kinds
NUMBER_KINDS: tuple[Kind, ...] = (Kind.INT, Kind.FLOAT, Kind.BOOL)
#: NumPy scalar types the checker draws, by dtype name
NUMPY_SCALAR_DTYPES: tuple[str, ...] = ("float64", "int64", "float32")


def expand_kinds(kinds: "tuple[Kind, ...] | list[Kind] | Kind") -> tuple[Kind, ...]:
    """``kinds`` with ANY replaced by :data:`UNKNOWN_KINDS`, without repeats, in canonical order."""
    if isinstance(kinds, Kind):
        kinds = (kinds,)
    wanted: set[Kind] = set()
    for kind in kinds:
        wanted |= set(UNKNOWN_KINDS) if kind is Kind.ANY else {kind}
    if Kind.OPAQUE in wanted and len(wanted) > 1:
        raise ValueError("Kind.OPAQUE cannot be mixed with other kinds")
    return tuple(k for k in BUILDABLE_KINDS + (Kind.OPAQUE,) if k in wanted)


@dataclass(frozen=True)
class InputSpec:
    """One name a kernel reads, with what the pass knows about it.

    ``kinds`` are the kinds the pass's evidence allows (``codemods.evidence``); left empty, they
    are what ``kind`` stands for (``InputSpec(name, Kind.TENSOR)``: tensors only; ``Kind.ANY``:
    :data:`UNKNOWN_KINDS`). Given, ``kind`` is set from them: the one kind, or ANY for several.

    ``per_step`` inputs are lists, one value per iteration of an abstracted loop; every per-step
    input of a kernel gets the same length (the step count), and every element of one list is of
    the same kind, rank and dtype.
    """

    name: str
    kind: Kind = Kind.TENSOR
    #: ranks the tensor (or ndarray) may have; the old code's domain narrows this further
    ranks: tuple[int, ...] = (0, 1, 2, 3)
    #: dtypes the tensor may have (names of torch dtypes); empty means DEFAULT_DTYPES
    dtypes: tuple[str, ...] = ()
    #: the value is used as an index (an integer tensor or int); may be negative unless nonnegative
    index: bool = False
    nonnegative: bool = False
    #: a loop bound or other count: an int drawn around the shared size pool, negatives included
    count: bool = False
    per_step: bool = False
    #: every kind the evidence allows; empty: the kinds ``kind`` stands for
    kinds: tuple[Kind, ...] = ()
    #: for Kind.DICT: the keys the code subscripts the dict with (every generated dict has them)
    keys: tuple[str, ...] = ()
    #: the dimension of this tensor the loop walks (``x`` in ``for i in range(len(x)): ... x[i]``);
    #: with ``count`` inputs, what makes the loop's extent. An example on which the loop runs
    #: zero times is judged only when the same example with a non-empty extent is one the old
    #: code accepts: an empty batch says nothing about the other inputs' shapes, and a loop that
    #: never runs accepts any
    batch_dim: int | None = None
    #: the first position the loop walks along ``batch_dim`` (``range(1, len(x))``: 1): the loop
    #: runs zero times when that dimension is at most this long
    batch_start: int = 0
    #: more dimensions loops walk (an inner loop's, from position 0): empty ones make a zero
    #: extent too, judged like an empty ``batch_dim``
    inner_dims: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.kinds:
            kinds = expand_kinds(self.kinds)
            object.__setattr__(self, "kinds", kinds)
            object.__setattr__(self, "kind", kinds[0] if len(kinds) == 1 else Kind.ANY)

    def allowed_kinds(self) -> tuple[Kind, ...]:
        """The kinds the checker tries for this input, in canonical order."""
        return self.kinds or expand_kinds(self.kind)

    def allowed_dtypes(self) -> tuple[str, ...]:
        """The dtypes the checker draws this input with."""
        if self.dtypes:
            return self.dtypes
        if self.index:
            return ("int64", "int32")
        return DEFAULT_DTYPES

    def coverage_dtypes(self) -> tuple[str, ...]:
        """Every dtype the input may hold: those drawn, and -- where nothing narrows them -- the
        narrow ones, each tried once by the checker's dtype coverage."""
        if self.dtypes:
            return self.allowed_dtypes()
        if self.index:
            # a 0-d int8 / int16 tensor indexes one element as an int64 one does, but a whole
            # int8 / int16 index tensor raises: the rewrites that batch positions cast them
            return self.allowed_dtypes() + ("int16", "int8")
        return DEFAULT_DTYPES + NARROW_DTYPES


@dataclass(frozen=True)
class Kernel:
    """Old and new code that must agree on every input the old code accepts."""

    old: str
    new: str
    inputs: tuple[InputSpec, ...]
    #: names whose values must agree after both snippets ran
    outputs: tuple[str, ...]
    #: module bindings the snippets use, as (name, dotted module): ("F", "torch.nn.functional").
    #: Only torch, its submodules, numpy and math are ever bound; other names become opaque.
    modules: tuple[tuple[str, str], ...] = (("torch", "torch"),)
    #: set when the new code sums floating values in another order than the old code; the
    #: checker then widens the float tolerance by the reduction length, and says so
    reorders_float_reduction: bool = False
    #: ``(target, values)``: the new code rounds ``values`` to ``target``'s dtype before adding
    #: them (``out.index_put_(..., w.to(out.dtype), accumulate=True)``), where the loop adds each
    #: in the wider dtype and rounds the sum. On an example where ``values`` is an array of a
    #: dtype ``target``'s rounds (wider, or bfloat16 beside float16), the tolerance is widened as
    #: for a reordered sum -- non-finite positions still compared (a weight past the target's
    #: range is inf once cast, where the loop's sum may come back into range); on every other
    #: example nothing is widened
    rounds_addends: tuple[str, str] | None = None
    #: free-text note shown with the verdict (why the kernel abstracts what it abstracts)
    note: str = ""
    #: also compare gradients: floating tensor inputs are made to require grad and, where the
    #: old code is differentiable, the gradients of a random weighted sum of the outputs with
    #: respect to each of them must agree (and an output the old code leaves differentiable must
    #: stay so: a ``.detach()`` that kills a gradient is refuted). Off by default: rewrites of
    #: ``.item()`` code drop the graph on purpose, as the old code did.
    gradients: bool = False
    #: the pairs of inputs that may be one object where the code runs (two parameters a caller
    #: may pass one tensor as; ``codemods.loops.kernels.alias_pairs``): the checker's aliasing
    #: sweep gives them one array where the old code writes into one of them. None: any pair may.
    may_alias: tuple[tuple[str, str], ...] | None = None

    def array_kind(self) -> "Kind":
        """The kind of array the code most likely runs on: ndarrays for code that binds NumPy and
        not torch, else tensors (what the fallback searches and the timing try first)."""
        roots = {target.split(".")[0] for _, target in self.modules}
        return Kind.NDARRAY if "numpy" in roots and "torch" not in roots else Kind.TENSOR

    def key(self) -> str:
        """A content hash: equal kernels get equal verdicts, so verdicts can be cached."""
        payload = json.dumps(asdict(self), sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]


class Outcome(str, enum.Enum):
    VERIFIED = "verified"
    REJECTED = "rejected"
    UNVERIFIED = "unverified"
    #: verified, but a candidate whose speed must be measured before it is emitted
    #: (``Candidate.needs_measurement``) could not be timed: the pipeline's outcome, never a
    #: checker's verdict
    UNMEASURED = "unmeasured"
    SKIPPED = "skipped"

    def __str__(self) -> str:  # "verified" in text and f-strings, on every Python version
        return self.value


@dataclass(frozen=True)
class Counterexample:
    """A (shrunk) input on which old and new code disagree, in printable form."""

    inputs: tuple[tuple[str, str], ...]
    #: which output or mutated input differed, and how
    where: str
    old: str
    new: str
    detail: str = ""
    seed: int | None = None
    #: the exact inputs, as JSON (``equivalence.values.encode_inputs``), so that the example can
    #: be replayed bit for bit (``python -m torchfix.equivalence ... --replay FILE``)
    witness: str = ""
    #: the device the example ran on
    device: str = ""

    def render(self, indent: str = "  ") -> str:
        lines = []
        if self.seed is not None or self.device:
            lines.append(f"{indent}seed: {self.seed}   device: {self.device or 'cpu'}")
        lines.append(f"{indent}inputs:")
        lines += [f"{indent}  {name} = {value}" for name, value in self.inputs]
        lines.append(f"{indent}{self.where} differs:")
        lines.append(f"{indent}  old: {self.old}")
        lines.append(f"{indent}  new: {self.new}")
        if self.detail:
            lines.append(f"{indent}  {self.detail}")
        return "\n".join(lines)


#: The speed decision band. Timing is noisy (a loaded CPU moves a ratio near 1.0x by 10-30 %), so a
#: threshold near 1.0x would emit a rewrite in one run and withhold it in the next. Only a ratio
#: far outside the noise decides from the measurement: below ``CLEARLY_SLOWER`` at the largest size
#: measured, a rewrite is withheld; at or above ``CLEARLY_FASTER`` at every size, even a form that
#: is not faster by construction is emitted. Between them the static cost model decides, which no
#: run's load can move (``SpeedClass``; ``pipeline._judge``). "Slower" is read at the largest size
#: alone: the smallest is the noisiest (a per-channel mean measured 0.40x to 0.67x at n=256 over
#: seven runs, 0.21x to 0.29x at n=4096 in six of them and 0.56x once), and the largest is the
#: one a loop's cost grows toward. A deciding timing near an edge is measured three times and the
#: median run kept (``timing._settle_edges``); two noisy runs the same way can still cross it.
CLEARLY_SLOWER = 0.5
CLEARLY_FASTER = 2.0


class SpeedClass(enum.Enum):
    """Where a verified rewrite's measurement lies against the decision band."""

    NOT_MEASURED = "not measured"
    CLEARLY_SLOWER = "clearly slower"
    IN_BAND = "in the band"
    CLEARLY_FASTER = "clearly faster"


@dataclass(frozen=True)
class Timing:
    """Old vs new code timed side by side at one loop extent on one device (``equivalence.timing``)."""

    device: str
    #: the loop extent (every tensor's first dimension, per-step list length, loop count)
    size: int
    old_seconds: float
    new_seconds: float
    #: timed calls of each, after one warm-up call (the figures are medians)
    runs: int = 0
    #: the input signature timed, e.g. "x: float32[rank 2]"
    signature: str = ""

    @property
    def speedup(self) -> float:
        return self.old_seconds / self.new_seconds if self.new_seconds > 0 else float("inf")

    def render(self) -> str:
        return f"{format_speedup(self.speedup)} at n={self.size}"


def format_speedup(ratio: float) -> str:
    if ratio >= 100:
        return f"{ratio:.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x".replace(".0x", "x")
    return f"{ratio:.2f}x"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str
    counterexample: Counterexample | None = None
    #: examples on which the old code ran and old and new were compared
    examples: int = 0
    devices: tuple[str, ...] = ()
    #: the admitted signatures, e.g. ("x: float32[rank 1]",)
    signatures: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: old vs new timed at realistic sizes, per device (verified kernels only)
    timings: tuple[Timing, ...] = ()
    #: why the kernel was not timed, when it was not
    timing_note: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.VERIFIED

    def deciding_timings(self) -> tuple[Timing, ...]:
        """The timings on the device that decides: the GPU when one was measured, else the CPU."""
        if not self.timings:
            return ()
        device = "cuda" if any(t.device == "cuda" for t in self.timings) else self.timings[0].device
        return tuple(t for t in self.timings if t.device == device)

    def speed_class(self) -> SpeedClass:
        """The deciding device's measurement against the band (``CLEARLY_SLOWER``..``CLEARLY_FASTER``)."""
        deciding = self.deciding_timings()
        if not deciding:
            return SpeedClass.NOT_MEASURED
        if max(deciding, key=lambda t: t.size).speedup < CLEARLY_SLOWER:
            return SpeedClass.CLEARLY_SLOWER
        if all(t.speedup >= CLEARLY_FASTER for t in deciding):
            return SpeedClass.CLEARLY_FASTER
        return SpeedClass.IN_BAND

    def speed_text(self) -> str:
        """``37x at n=256, 112x at n=4096 (cpu)``; empty when nothing was measured."""
        by_device: dict[str, list[Timing]] = {}
        for t in self.timings:
            by_device.setdefault(t.device, []).append(t)
        return "; ".join(f"{', '.join(t.render() for t in ts)} ({device})" for device, ts in by_device.items())


#: the start of the reason of a check whose old code ran on no generated input
NO_DOMAIN = "found no input on which the old code runs"


def merge_verdicts(verdicts: list[Verdict]) -> Verdict:
    """One verdict over several devices: the first non-verified one decides -- except a GPU leg on
    which the old code runs on no input at all (it converts to numpy, say): such code is not GPU
    code, that leg has no evidence either way, and the verdict says it was checked without it."""
    skipped_legs = []
    for k, verdict in enumerate(verdicts):
        if k > 0 and verdict.outcome is Outcome.UNVERIFIED and verdict.reason.startswith(NO_DOMAIN) and verdicts[0].ok:
            skipped_legs.append(verdict)
            continue
        if verdict.outcome is not Outcome.VERIFIED:
            return verdict
    verdicts = [v for v in verdicts if v not in skipped_legs]
    devices = tuple(d for v in verdicts for d in v.devices)
    examples = sum(v.examples for v in verdicts)
    signatures = tuple(sorted({s for v in verdicts for s in v.signatures}))
    notes = tuple(dict.fromkeys(n for v in verdicts for n in v.notes)) + tuple(
        f"not checked on {', '.join(v.devices) or 'the GPU'}: the old code runs on no input there ({v.reason[len(NO_DOMAIN):].lstrip('; ')[:160]})"
        for v in skipped_legs
    )
    return Verdict(
        Outcome.VERIFIED,
        f"no counterexample in {examples} examples on {', '.join(devices)}",
        None,
        examples,
        devices,
        signatures,
        notes,
    )
