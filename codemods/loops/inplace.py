"""In-place method chains on the elements a loop walks: per-channel normalisation.

``for t, m, s in zip(img, means, stds): t.sub_(m).div_(s)`` walks the channels of ``img`` and
changes each in place, with one Python number per channel from each list. The batched form runs
the same chain once on the channels, with each list as a tensor along the channel dimension::

    img[:3].movedim(0, -1).sub_(img.new_tensor(means)[:len(img)]).div_(img.new_tensor(stds)[:len(img)])

Why each piece is there:

- ``zip`` stops at the shortest sequence: ``img[:3]`` keeps the channels the loop reached, and
  ``[:len(img)]`` cuts the lists where ``img`` has fewer channels than they have numbers.
- ``.movedim(0, -1)`` is a view with the channels last, so a vector of one number per channel
  broadcasts against it whatever the rank of ``img`` (a channel of a 3-D image is a matrix, of a
  2-D one a vector); the in-place methods write through the view into ``img``.
- ``img.new_tensor(...)`` is on ``img``'s device (a CUDA image gets CUDA numbers) and holds the
  numbers as each in-place method holds a Python number: ``add_`` / ``sub_`` / ``clamp_`` round
  it to ``img``'s dtype, ``mul_`` / ``div_`` keep a float in float32 for a float16 or bfloat16
  image (``torch.promote_types(img.dtype, torch.float32)``, their "opmath" type). Rounding
  ``0.229`` to bfloat16 first changes ``t * 0.229 + 0.485`` by several per cent where the two
  nearly cancel; the checker draws those dtypes and holds the rewrite to it.

Only lists (or tuples) of number literals -- written at the loop or bound once before it -- are
lifted, and only the arithmetic in-place methods whose arguments are numbers: their count is
known, and their values have no shape of their own. The checker decides the rest.

A parameter ``zip(img, mean, std)`` is not lifted, though ``torch.as_tensor(mean[:n], ...)``
reads well: the checker must try every kind the code allows there, and no one-line form is
faithful to all of them. An item of a 2-D ``mean`` is a row, which ``t.add_(row)`` broadcasts
against the channel and computes in the row's dtype (float64 rows: float64 arithmetic, rounded
once), where a number is first rounded to the channel's dtype; a generator cannot be cut to the
channels ``zip`` reaches without consuming what ``zip`` leaves. (Tried, with ``movedim`` on both
sides and a run-time dtype: the checker refuted the 2-D float64 case by a cancellation
``1.00000002e20 - 1e20``.)
"""

from __future__ import annotations

import libcst as cst

from torchfix.codemods.analysis import comments_in
from torchfix.codemods.base import Edit
from torchfix.codemods.loops.domain import Domain
from torchfix.codemods.loops.facts import LoopFacts, Step, StepKind
from torchfix.codemods.loops.kernels import UnfaithfulKernel, build_kernel, walkable_arrays
from torchfix.codemods.loops.nodes import attribute, call, code_of, integer, is_float_literal, is_number, name, slice_of, subscript
from torchfix.codemods.loops.rewrite import CannotRewrite, LoopRewrite
from torchfix.equivalence.kernel import Kind

#: in-place methods of one number per element, and how many numbers each takes positionally
METHODS: dict[str, tuple[int, ...]] = {
    "add_": (1,), "sub_": (1,), "mul_": (1,), "div_": (1,), "clamp_": (1, 2), "clamp_min_": (1,), "clamp_max_": (1,),
}


def chain_of(statement: cst.BaseStatement) -> tuple[str, list[tuple[str, list[cst.Arg]]]] | None:
    """``t.mul_(s).add_(m)`` as ``("t", [("mul_", [s]), ("add_", [m])])``; None for any other
    statement."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Expr):
        return None
    links: list[tuple[str, list[cst.Arg]]] = []
    node: cst.BaseExpression = small.value
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        links.append((node.func.attr.value, list(node.args)))
        node = node.func.value
    if not isinstance(node, cst.Name) or not links or any(method not in METHODS for method, _ in links):
        return None
    return node.value, links[::-1]


def is_inplace_chain(facts: LoopFacts) -> bool:
    """Whether the loop's body is one in-place chain on an element the loop walks."""
    return facts.comprehension is None and steps_are_inplace_chain(facts.steps, facts.domain)


def steps_are_inplace_chain(steps: tuple[Step, ...], domain: Domain) -> bool:
    """:func:`is_inplace_chain` of a ``for`` loop's body steps and domain."""
    if len(steps) != 1 or steps[0].kind is not StepKind.OTHER:
        return False
    found = chain_of(steps[0].statement)
    return found is not None and found[0] in {w.element for w in domain.walked}

#: the methods that take a Python float in float32 for a float16 or bfloat16 tensor (the others
#: round it to the tensor's dtype first), as torch's CPU kernels do
_OPMATH_METHODS = frozenset({"mul_", "div_"})


def inplace_chain_loop(facts: LoopFacts) -> LoopRewrite:
    """The loop's in-place chain run once on the walked channels; raises :class:`CannotRewrite`."""
    if facts.blockers:
        raise CannotRewrite(facts.blockers[0], facts.loop)
    statement = facts.steps[0].statement
    found = chain_of(statement)
    if found is None or facts.domain.index is not None or facts.domain.stop is not None:
        raise CannotRewrite("not an in-place chain on the elements of a zip", statement)
    element, links = found
    walked = {w.element: w for w in facts.domain.walked}
    target = walked[element]
    if target.name is None:
        raise CannotRewrite(f"`{element}` walks an expression, not a named tensor", statement)
    evidence = facts.evidence(target.name)
    if not (Kind.TENSOR in evidence.kinds and walkable_arrays(evidence.kinds)):
        # a list of tensors walks like a tensor, but has no one tensor to run the chain on
        raise CannotRewrite(evidence.missing_tensor("one in-place chain on its channels"), facts.loop)
    for variable in facts.loop_variables:
        if facts.used_after(variable):
            raise CannotRewrite(f"the loop variable `{variable}` is read after the loop", facts.loop)
    # each other walked sequence: a list of number literals of one common length
    lengths = set()
    #: each zipped name's source and the literal it is
    numbers: dict[str, tuple[cst.BaseExpression, cst.List | cst.Tuple]] = {}
    for other in facts.domain.walked:
        if other.element == element:
            continue
        literal = facts.number_list(other.source)
        if literal is None:
            # a sequence of unknown kind has no faithful one-line batched form: its items may be
            # arrays, which broadcast against a channel and promote its dtype unlike a number
            # (`t.add_(row)` computes in float64 for a float64 row, in float32 for a number),
            # and a one-shot iterator cannot be cut to the channels zip reaches
            raise CannotRewrite(
                f"`{code_of(other.source)}` is not a list of number literals: its items may be arrays, which promote "
                "and broadcast otherwise than numbers, or it may be a one-shot iterator; a literal list or tuple of "
                "numbers, at the loop or bound to a name before it, is lifted",
                statement,
            )
        lengths.add(len(literal.elements))
        numbers[other.element] = (other.source, literal)
    if len(lengths) != 1:
        raise CannotRewrite("the zipped lists differ in length", statement)
    count = lengths.pop()
    tensor = name(target.name)
    imports: tuple[str, ...] = ()
    batched: cst.BaseExpression = call(
        attribute(subscript(tensor, [slice_of(None, integer(count))]), "movedim"), integer(0), cst.UnaryOperation(cst.Minus(), integer(1))
    )
    for method, args in links:
        if len(args) not in METHODS[method] or any(a.keyword is not None or a.star for a in args):
            raise CannotRewrite(f"`.{method}(...)` takes other arguments than numbers", statement)
        lifted = []
        for argument in args:
            value = argument.value
            if isinstance(value, cst.Name) and value.value in numbers:
                source, literal = numbers[value.value]
                floats = any(is_float_literal(e.value) for e in literal.elements)
                if floats and method in _OPMATH_METHODS:
                    promote, imports = facts.context.spelling("torch.promote_types")
                    float32, _ = facts.context.spelling("torch.float32")
                    dtype = call(promote, attribute(tensor, "dtype"), float32)
                    per_channel = call(attribute(tensor, "new_tensor"), source, dtype=dtype)
                else:
                    per_channel = call(attribute(tensor, "new_tensor"), source)
                lifted.append(cst.Arg(subscript(per_channel, [slice_of(None, call(name("len"), tensor))])))
            elif is_number(value):
                lifted.append(cst.Arg(value))
            else:
                raise CannotRewrite(f"`{code_of(value)}` is neither a number nor one of the zipped numbers", statement)
        batched = call(attribute(batched, method), *lifted)
    leading = list(facts.loop.leading_lines) + comments_in(facts.loop.with_changes(leading_lines=()))
    new_statement = cst.SimpleStatementLine([cst.Expr(batched)], leading_lines=leading)
    try:
        kernel = build_kernel(
            facts, [facts.loop], [new_statement.with_changes(leading_lines=())], (target.name,),
            note="the per-channel in-place loop against one chain on the channels", gradients=True, walked={target.name: 0},
            # the walked tensor is an input however it was computed (``img = imgs[j]``): only then
            # can the checker tell an example on which the loop runs no step
            given=(target.name,),
        )
    except UnfaithfulKernel as exc:
        raise CannotRewrite(str(exc), facts.loop) from None
    return LoopRewrite(
        facts, f"`{target.name}` changed in place once, channels last", (Edit(facts.loop, new_statement),), kernel, imports,
        anchor=statement, statements=(new_statement,), walked=((target.name, 0),),
    )

