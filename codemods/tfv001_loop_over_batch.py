"""TFV001 loop-over-batch: a Python loop computes a batch one sample at a time."""

from __future__ import annotations

import ast
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.base import Example, Proposal, Rule
from torchfix.codemods.loops import ladder
from torchfix.codemods.analysis import conversions_in
from torchfix.codemods.loops.domain import Domain
from torchfix.codemods.loops.facts import Step, StepKind, comprehension_facts, loop_facts
from torchfix.codemods.loops.inplace import METHODS as INPLACE_METHODS, steps_are_inplace_chain
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.rewrite import CONSUMER_FORMS, named_list
from torchfix.codemods.loops.sweep import looks_like_a_sweep
from torchfix.codemods.syntax import SyntaxIndex

CODE = "TFV001"
MESSAGE = "a loop computes one sample at a time: batched operations do the whole batch"


def _leaves_a_result(statement: ast.stmt) -> bool:
    """Whether a statement of a loop body can carry a result out of the loop: a store
    (``out[i] = v``, ``obj.attr = v``), an accumulation (``acc += v``, ``acc = acc + v``,
    ``x = torch.cat([x, y])``), an append, an in-place method. A temporary (``t = f(x[i])``) alone
    leaves only its last value, which no rewrite lifts: a loop of nothing else is no candidate."""
    if isinstance(statement, ast.AugAssign):
        return True
    if isinstance(statement, ast.Assign):
        bound: set[str] = set()
        for target in statement.targets:
            for node in ast.walk(target):
                if isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
                    return True
                if isinstance(node, ast.Name):
                    bound.add(node.id)
        return any(isinstance(node, ast.Name) and node.id in bound for node in ast.walk(statement.value))
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        return isinstance(func, ast.Attribute) and func.attr in ("append", *INPLACE_METHODS)
    return False


class LoopOverBatch(Rule):
    code = CODE
    tensor_code_only = True
    name = "loop-over-batch"
    summary = "A Python loop computes one sample of a batch at a time where batched operations do."
    docs = """
    ## What it does
    Finds loops over the samples of a batch -- `for i in range(n)` (also `range(len(x))`,
    `range(x.size(0))`, `range(b)` after `b = x.shape[0]`), `for r in x`, `enumerate(x)`,
    `zip(x, y)`, `x.unbind()`, one-row chunks `torch.chunk(x, x.size(0))` -- whose body is a
    dataflow of per-sample computations, and batches the body statement by statement:

    - a per-sample temporary (`a = x[i] @ w`) becomes a batched temporary (`a = x @ w`);
    - a store `out[i] = e` (also `out[i, :]`, `out[:, i]`, `out[i] += e`) becomes one store of
      the batched `e`, or replaces the allocation (`out = torch.zeros(n, d)`) when the loop
      filled all of it;
    - an accumulation `acc += e` becomes one reduction over the samples;
    - `items.append(e)` followed by `torch.stack(items)` / `torch.cat(items)` /
      `torch.tensor(items)` becomes the batched `e`; for NumPy loops, `np.stack` /
      `np.concatenate` / `np.vstack`, and `np.array(items)` / `np.float32(items)` (one number
      per sample) become the same call on the batched `e`. The consumer may rebind the list's
      name (`items = np.float32(items)`), and may follow the `with torch.no_grad():` that holds
      a NumPy loop (never a torch one: the batch would be computed outside the grad mode);
    - a comprehension is lifted the same way where `torch.stack` / `torch.cat` /
      `torch.tensor` takes it, and where it is bound to a name (`rows = [f(x[i]) for i in ...]`)
      that one call on the next line consumes (`rows = torch.stack(rows)`, `np.asarray(rows)`):
      the list's line goes and the consumer takes the batched value. A name read anywhere else
      after it (before a consumer that rebinds it ends the list) keeps the list;
    - a store of one number at per-sample positions (`onehot[i, labels[i]] = 1`, `grid[r, c] =
      -1.0` for `r, c in zip(rows, cols)`) becomes one advanced-index store
      (`onehot[torch.arange(n, device=onehot.device), labels] = 1`): every step writes the same
      value, so repeated positions need no order. A per-sample value there, or a second store
      into the same array, keeps the loop (which write wins would then matter);
    - one number per sample stored into a slot whose rank nothing pins (`w[0, 0, i, j] = ...`
      where `w` may be 4-D or deeper) is stored with the batch axis last,
      `w[0, 0, i, :n].movedim(0, -1)[...] = v`, which fills each sample's slot whatever its rank;
      a float made of Python numbers and the index is computed in float64, as Python does,
      before the store casts it;
    - a table of Python-number math -- a body of temporaries and stores whose values read
      only the loop indices, Python numbers, `math` functions and conditional expressions,
      stored into one array allocated with a float dtype (`torch.zeros`, `np.zeros`, the legacy
      `torch.FloatTensor(n, d).fill_(0)`), as in sinusoidal position encodings -- is computed
      once on both indices of a nested loop, in float64 as Python computes it, on the device of
      the table it fills: `angle = torch.arange(n, device=pe.device, dtype=torch.float64)[:, None]
      / ...`, `pe[:, :d] = torch.where(k % 2 == 0, torch.sin(angle), torch.cos(angle))`. A
      conditional whose test is per sample becomes `torch.where` (one test per sample picks its
      whole branch); one whose test is loop-invariant stays a Python conditional. An integer
      table, an augmented store, or a value that also reads a tensor is not such a table (libm and
      torch may round a last place apart, which truncation would expose; the tensor's device may
      differ from the table's);
    - the walked rows themselves appended to a list that stays a list -- `for c in
      torch.chunk(x, x.size(0)): items.append(c.squeeze(0))`, or `for r in x: items.append(r)`,
      the list empty or not -- become `items.extend(x.unbind(0))`. Only rows the loop iterates:
      like `unbind`'s, they are views that refuse in-place writes under autograd, where `x[i]`
      takes them, so a list of `x[i]` keeps its loop;
    - one loop that appends to several lists, each turned into a tensor on its own line after
      the loop (`a = torch.stack(a)`; `b = torch.stack(b)`), gives each list its batched value;
      a list may be created a few lines before its loop when nothing in between reads it;
    - `if c: continue`, and a trailing `if c:` block of stores (no `else`), become a mask:
      `keep = c_batched` (`and` / `or` / `not` as `&` / `|` / `~`), then the stores write the
      rows of `keep` only (`out[keep] = e[keep].to(out.dtype)`); where the block evaluates
      something the loop reached only for some samples, under `if keep.any():`.

    - a boolean selection of each sample, `x[i][m[i]]` with `m[i]` a mask of the sample's whole
      shape: appended and concatenated (`torch.cat(rows)`), it is the batch's selection
      `x[m]` (row-major: the order the loop appends in); summed whole per sample (`.sum()`), it
      is `x.masked_fill(~m, 0).sum(1)` (not `.max()`: see the trap `trap_masked_row_max`).
      Element-wise methods with Python numbers may come in
      between (`.clamp(min=0)`), also through a temporary. The mask must be a comparison the
      function computes (`m = a.eq(b)`, `cost < limit`): the checker then draws it as bool
      (an integer array at that place gathers positions instead). Lists made in pairs
      (`a, b = [], []`) are lifted too; one the loop does not build stays in the statement;
    - one number per sample (a whole-sample reduction, Python numbers, arithmetic of those)
      stored where nothing pins any rank is offered, after the batched rungs, as `torch.vmap`
      of the body stored with the batch axis last:
      `out[:].movedim(0, -1)[...] = torch.vmap(lambda t: (s >= t).float().sum() / n)(ts)`,
      right for every rank; it runs under `if len(ts) > 0:` (vmap maps no empty batch).
    - `items.append(e.item())` into a list created empty right before the loop, which stays a
      list after it (returned, printed, extended: no consumer makes it one tensor), becomes
      `items = e_batched.tolist()`: the same Python numbers (`.item()` and `.tolist()` convert
      alike) in one device sync instead of one per sample. Only where nothing can see the list
      before the loop ends: every other use of the name follows the loop, outside nested
      functions and lambdas (a holder given the list earlier, `log["n"] = items`, keeps it).
    - a method of a value the loop does not change, called with per-sample operands
      (`labels.eq(q)`, `w.mul(x[i])`; never an in-place one, `total.add_(x[i])`), broadcasts
      them as the function form does. Per-sample Python numbers (the loop index, `q * 256 + 4`)
      meeting a tensor are cast to the dtype each number takes beside it
      (`torch.arange(n, device=labels.device).to(torch.result_type(labels, 0))`): an int compared
      with uint8 labels wraps to their dtype (300 compares as 44), one compared with bfloat16
      rounds to it, where int64 positions would not. Where nothing pins the receiver's rank,
      `torch.vmap` maps the index itself -- only where every use of it is such a comparison with
      one invariant tensor (elsewhere a 0-d tensor is not the Python int: `q / 10` would be
      float32): `torch.vmap(lambda q: labels.eq(q).sum())(torch.arange(...).to(...))`. The checker
      draws a batch of 260 beside every int8 / uint8 array, where such a wrap shows.

    - `for c, m, s in zip(img, means, stds): c.mul_(s).add_(m)` -- an in-place chain of
      `add_` / `sub_` / `mul_` / `div_` / `clamp_` on the channels of a tensor, with one number
      per channel from lists of number literals -- becomes one chain on the channels, channels
      last: `img[:3].movedim(0, -1).mul_(img.new_tensor(stds)[:len(img)]).add_(...)` (`zip`
      stops at the shortest sequence, and a channel may have any rank).

    - an `if` / `elif` / `else` whose every branch binds the same targets in the same order
      (names, stores, accumulations: `if r[k] != 0: prev = k / r[k]` / `else: prev = 1.0`) is
      the same as one line per target picking its value with a conditional expression
      (`prev = k / r[k] if r[k] != 0 else 1.0`), as long as no test reads what a branch binds;
      each line is then lifted like any other, to `np.where` / `torch.where` (nested for an
      `elif` chain). The batch evaluates every branch for every sample: where the branch a
      sample did not take raises, or its gradient is NaN (`a * a` of a NaN `a` under
      `torch.where`), the checker refutes the form and the loop stays. Under NumPy a per-sample
      divisor in a branch is kept from zero where the branch is not taken, in its own dtype
      (`np.where(r != 0, k / np.where(r != 0, r, np.ones_like(r)), 1.0)`; the dividend of `//`
      and `%` with `np.zeros_like`): a plain `k / r` would signal a
      division by zero the loop never made -- a RuntimeWarning, and an error under
      `np.seterr(all="raise")` -- and the checker, which records NumPy's floating-point signals,
      refutes a form that adds one.

    - a masked maximum (or minimum) swept over thresholds -- `for t in np.arange(0., 1.1, 0.1):`
      (or `np.linspace`, or a name bound once to one above the loop and read only there, in
      `len()` or by subscript), `p = 0` where the mask `rec >= t` selects nothing (`np.sum(m) == 0`,
      `not m.any()`, `np.count_nonzero(m) == 0`, or the reverse test) and `np.max(prec[rec >=
      t])` where it does, then `ap += p / 11` into a name or an element `ap[l]` (PASCAL VOC's
      11-point average precision) -- becomes one comparison against every threshold:
      `reached = rec >= thresholds.reshape((-1,) + (1,) * np.ndim(rec))`, then under `if
      reached.any():` the masked maximum `np.where(selects, prec, -np.inf).reshape(reached.shape[0],
      -1).max(1)` with the misses set to 0, summed once. The guard keeps a Python float
      accumulator a Python float where no threshold is reached (and `prec` unread, as the loop
      left it); `selects` gives the mask the axes `prec` has beyond `rec`'s. Only NumPy's own
      ranges are swept (their float64 elements compare like one float64 array of them; Python
      floats do not), only a miss value of 0 and an addend that is 0 there (`p`, `p / c` and `p *
      c` with a number literal `c`, a float one for `*`: an int one would wrap round in a uint8
      maximum where the float fill does not; `p / len(gt)` divides the miss too, a `0 / 0` that
      raises where the sweep would not), and an element
      accumulator only in an array the code allocates as floats (`np.zeros(n)`): an integer
      element truncates each step's `+=`. An element's sum is taken in its array's dtype.

    Where the batched form evaluates something the loop reached only when it ran (`w[0]` for
    `for c in range(1, w.size(0)): w[c] = w[0]`, `1.0 / n` computed once), a lower rung runs the
    stores, and the temporaries nothing reads after the loop, under `if w.size(0) > 1:`. A loop
    count bound once to a size (`n = len(x)`, `x.shape[0]`) is drawn never negative.

    Loops over NumPy arrays (a walked name the code shows to be an ndarray, not a tensor) are
    batched with numpy spellings (`axis=`, `keepdims=`, `np.moveaxis`). A walked name that may
    be a tensor or an ndarray (`.shape` is used on it, or several indices at once: `x[i, j]`)
    is tried as both by the checker; one that may be a list is not batched -- except a sequence
    read only as per-sample positions (`p[i, labels[i]]` -> `p[torch.arange(n), labels]`), which
    indexes alike as a tensor, an ndarray or a list of integers: the checker tries each kind the
    code allows, drawn as integers (a bool at a position selects rows instead of indexing:
    a different operation the code does not mean).

    A sample may be read as `x[i]`, `x[i, ...]`, `x[:, i]`, `x[i + 1]` or `x[i:i + 1]`. The body
    may use arithmetic, comparisons, `torch` / `torch.nn.functional` functions and tensor methods
    from torchfix's table of known callees (element-wise ops, reductions with or without `dim`,
    softmax-style ops, matrix products, reshapes, `.item()` / `float()` conversions), and layers
    the class builds in `__init__` that treat samples independently (`self.fc = nn.Linear(...)`,
    convolutions, activations, `LayerNorm`). A pure helper the module defines (`wh_iou(a, gwh)`,
    a `def` of its arguments that only computes) is mapped with `torch.vmap`; the verification
    kernel holds its definition, so the checker runs the helper itself. One number per sample
    meeting a sample whose rank nothing pins is broadcast, after the rank guesses, with the batch
    axis last (`np.moveaxis(out[:, :, :3], 2, -1) - means`). A whole-sample `sum` / `mean` / `std` / `var` of a
    sample read along a later dimension (`x[:, c, :, :].mean()`) reduces the batch over every
    other dimension, positionally -- `x[:, :3, :, :].mean((0, *range(2, x.ndim)))` where nothing
    pins the rank -- which a tensor and an ndarray spell alike, each with its own `std`
    correction as in the loop. Another whole-sample reduction of a sample whose rank nothing pins
    but whose subscript needs dimensions reduces each flattened sample (`.flatten(1).mean(1)`);
    one whose subscript needs none is tried, after the rank guesses, as `x[..., None].flatten(1)`
    (right for one-number samples too); in NumPy, which cannot reshape an empty batch that way,
    as `x.max(axis=tuple(range(1, x.ndim)))`, and `a - a.min()` as `a - a.min(axis=...,
    keepdims=True)`. Rank guesses never go below what the loop's own
    subscripts take from a name (`x[i, :, :]`: at least 3-D). An `if` test of a row of a
    container (`if history[-1][b] == eos:`) is not batched: the container may be a list of
    lists, which compares with a number as one `False`.

    It stays silent, or says why in a skip, when a step depends on the previous one (a
    temporary read before it is assigned, a row read at another position than the one written),
    the body has effects or draws random numbers, a walked name is not shown to be a tensor (a
    list of tensors may be ragged), or the body calls something outside the table. `and` in a
    mask evaluates both sides for every sample: where the loop's short-circuit skipped a read
    that would raise (arrays of different lengths), the checker refutes the mask.

    ## Why is this bad?
    Each iteration pays Python's interpreter, a tensor object per sample and one small kernel
    launch per operation; on a GPU the launches alone dominate. Batched operations run the same
    arithmetic in a few large kernels.

    ## Example
    ```python
    b, d = x.shape
    out = torch.zeros(b, d)
    for i in range(b):
        a = x[i] @ w
        a = a.relu()
        out[i] = a / a.sum()
    ```

    ## Use instead
    ```python
    b, d = x.shape
    a = x @ w
    a = a.relu()
    out = a / a.sum(1)[:, None]
    ```
    Dimensions shift by one (`dim=0` of a sample is `dim=1` of the batch); a reduction over a
    whole sample becomes one over all but the first dimension; values of different ranks are
    aligned as the per-sample broadcast aligns them. Where the code pins ranks (`b, d = x.shape`,
    an allocation's sizes) the rewrite uses them; where it does not, the candidate says what it
    assumes and the checker, which tries other ranks, decides. The lines above the loop pin
    ranks too: a name bound to `t.view(-1)`, `x.reshape(b, -1)`, `torch.zeros(n, d)`,
    `a.eq(b.expand(n, n))`, arithmetic of arrays of known rank, a reduction over literal
    dimensions, holds that rank at the loop until something binds it again (a binding on one
    branch, in an enclosing loop's body, a walrus, a `match` capture: the rank is forgotten),
    and the checker draws only that rank. A conversion pins a dtype the same way: a name bound to
    `order.astype(np.int32)` or `t.long()` is drawn with that dtype only (positions an argsort
    gave are never a bool mask), past earlier loops that only store into its items, until it is
    bound again or given to a call torchfix cannot see into (an `astype` copy the function has
    not given away stays its own). A function that changes a rank in place
    (`unsqueeze_`, `resize_`, `out=`, `.data =`) or declares `global` names pins nothing this
    way. The output keeps its dtype: the
    allocation is replaced only where the checker shows the batched value has its dtype, and is
    written in place (`out[:] = ...`) otherwise. It is a new array, as the old one was: where
    the batched value would be a view of an array the function holds (`x[:n].flatten(0, 1)` for
    `torch.cat` of rows of `x`), it is copied (`.clone()`, `.copy()`), and the checker refutes a
    result that shares memory with an input, or with an array both sides computed before the
    loop, where the old result did not (a later write into it would reach that array).

    ## When it stays silent
    - A statement of the body is neither a temporary, a store, an accumulation nor an append (a
      print, a log line, a nested loop), or the loop can leave early (`break`, `return`).
    - A step depends on the previous one: a temporary read before it is assigned, the output
      read at another position (`x[i] = x[i] + x[i - 1]`), an accumulator read in the body.
    - The body draws random numbers (`torch.randn`, dropout) or calls a module whose output
      depends on the batch (BatchNorm, Dropout) or something torchfix cannot see into (a
      model passed in, a helper): batching would change what it computes.
    - The loop variable or a temporary is read after the loop.
    - The loop runs where the function catches errors (a `try` with `except` clauses,
      `with contextlib.suppress(...)`): where the loop raises is then part of what the
      function does, and a batched form raises elsewhere (every rule refuses such code).
    - A boolean selection of a sample reaches anything but a whole `.sum()`, element-wise
      methods with numbers or a `torch.cat`: in particular its `.max()` / `.min()` (a masked
      `amax` has the values but not the gradients: where a row holds NaN, `.max()` gives the
      NaN its gradient and `amax` makes the row's gradient NaN).
    - An in-place chain takes something other than numbers (a tensor row, a keyword), zips lists
      of different lengths or of values that are not number literals, or walks a list of
      tensors.
    """
    examples = (
        Example(
            """
            import torch

            def unit_rows(x: torch.Tensor) -> torch.Tensor:
                n, d = x.shape
                out = torch.zeros(n, d)
                for i in range(n):
                    out[i] = x[i] / x[i].norm()
                return out
            """,
            """
            import torch

            def unit_rows(x: torch.Tensor) -> torch.Tensor:
                n, d = x.shape
                out = torch.zeros(n, d)
                out[:] = x / x.norm(dim=1, keepdim=True)
                return out
            """,
            id="unit-rows",
        ),
        Example(
            """
            import torch

            def recurrence(x: torch.Tensor) -> torch.Tensor:
                out = torch.zeros_like(x)
                for i in range(1, len(x)):
                    out[i] = out[i - 1] + x[i]
                return out
            """,
            None,
            id="recurrence",
        ),
    )

    required_bytes = ((b"for ",),)

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """A `for` loop whose body stores into a subscript, appends, or accumulates; or a
        `*.stack(...)` / `*.cat(...)` of a comprehension."""
        named = index.named_comprehensions
        for found in index.calls:
            func = found.func
            # (`from torch import cat` calls it by its bare name)
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if called in _COMPREHENSION_CONSUMERS and found.args:
                if isinstance(found.args[0], (ast.ListComp, ast.GeneratorExp)):
                    return True
            if isinstance(func, ast.Attribute) and func.attr in _NAMED_LIST_CONSUMERS and found.args:
                if isinstance(found.args[0], ast.Name) and found.args[0].id in named:
                    return True
        for loop in index.fors:
            # a trailing `if c:` block is lifted as a mask over the stores in it
            body = [*loop.body, *(s for s in loop.body if isinstance(s, ast.If) for s in s.body)]
            if any(_leaves_a_result(statement) for statement in body):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        context = ModuleContext.of(wrapper)
        proposals = []
        inner_loops: set[int] = set()
        for loop in context.nodes.of_type(cst.For):
            assert isinstance(loop, cst.For)
            if id(loop) in inner_loops:
                continue
            # (a body of one inner loop may be lifted with it: its steps are the inner loop's)
            inner = ladder.inner_loop(loop)
            facts = loop_facts(loop, context, wanted=None if inner is not None else _produces_a_batch)
            if facts is None:
                continue
            both = ladder.nested(facts)
            if both is not None:
                inner_loops.add(id(inner))
                facts = both
            if not _produces_a_batch(facts.steps, facts.domain):
                continue
            found = ladder.proposal(CODE, MESSAGE, facts)
            if found is not None:
                proposals.append(found)
        for comprehension in context.nodes.of_type(cst.ListComp, cst.GeneratorExp):
            assert isinstance(comprehension, (cst.ListComp, cst.GeneratorExp))
            if not _stacked(comprehension, context):
                continue
            facts = comprehension_facts(comprehension, context)
            if facts is None:
                continue
            found = ladder.proposal(CODE, MESSAGE, facts)
            if found is not None:
                proposals.append(found)
        proposals.sort(key=lambda p: (p.line, p.column))
        return proposals


#: calls whose first argument, a comprehension, the rule lifts: ``torch.stack([...])``, and the
#: constructors of one tensor from a comprehension of numbers (``torch.tensor([...])``)
_COMPREHENSION_CONSUMERS = ("stack", "cat", "concat", "tensor", "as_tensor", "Tensor", "FloatTensor")


#: what a comprehension bound to a name may be consumed by on the next line (``rows = [...]``,
#: then ``torch.stack(rows)`` / ``np.asarray(rows)``): the consumers of appended lists
_NAMED_LIST_CONSUMERS = frozenset(q.rsplit(".", 1)[1] for q in CONSUMER_FORMS)


def _stacked(comprehension: cst.CSTNode, context: ModuleContext) -> bool:
    """``torch.stack([...])`` / ``torch.cat([...])`` / ``torch.tensor([...])`` of a
    comprehension (its first argument), or a comprehension bound to a name that the next
    statement consumes (``rows = [...]`` then ``torch.stack(rows)``)."""
    found = context.call_taking(comprehension)
    if found is not None:
        return context.qualified(found.func) in {f"torch.{f}" for f in _COMPREHENSION_CONSUMERS}
    named = named_list(context, comprehension)
    return named is not None and any(context.qualified(c.func) in CONSUMER_FORMS for c in named.calls)


def _produces_a_batch(steps: tuple[Step, ...], domain: Domain) -> bool:
    """Whether a ``for`` loop produces per-sample results into a tensor this rule owns: a store
    at the loop index, or an append that a stack/cat consumes. Accumulations into Python numbers
    via `.item()` are TFV004's. (Asked of its body steps and domain, before the other facts.)"""
    kinds = {s.kind for s in steps}
    tensor_accumulation = any(
        s.kind is StepKind.ACCUMULATE and s.value is not None and not conversions_in(s.value) for s in steps
    )
    return StepKind.STORE in kinds or StepKind.APPEND in kinds or tensor_accumulation or steps_are_inplace_chain(steps, domain) or (
        looks_like_a_sweep(steps, domain))
