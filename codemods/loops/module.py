"""What the loop rules know about a module as a whole, computed once per module.

One fast walk (``ModuleNodes``) gives parents and the nodes of each type; the import bindings say
which local names are torch, numpy, math and their members, under any alias and at any level
(``import torch.nn.functional as F``, ``from torch import nn``, ``from numpy import sqrt``); the
classes' ``__init__`` say what ``self.fc`` is; top-level functions are the same-file helpers a
body may call. Positions are resolved only when a proposal needs a line.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypeVar

import libcst as cst

from torchfix.codemods.analysis import ModuleNodes, assigned_names, dotted, module_nodes, own_nodes, positions, target_names, within

if TYPE_CHECKING:
    from torchfix.codemods.evidence import ScopeEvidence
    from libcst.metadata import MetadataWrapper

T = TypeVar("T")

#: the libraries whose names a rewrite may use and a kernel may bind
LIBRARY_ROOTS = ("torch", "numpy", "math")


@dataclass(frozen=True)
class Attribute:
    """``self.<name> = <constructor>(<args>)`` in a class's ``__init__``."""

    name: str
    #: the qualified constructor (``torch.nn.Linear``), None when it is not a library call
    constructor: str | None
    call: cst.Call | None
    #: the statement that assigns it (for reports)
    statement: cst.CSTNode


@dataclass
class ClassInfo:
    node: cst.ClassDef
    #: attributes assigned exactly once in ``__init__``, by name
    attributes: dict[str, Attribute] = field(default_factory=dict)
    #: attribute names assigned anywhere outside ``__init__`` (their value may change)
    reassigned: set[str] = field(default_factory=set)
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)


class ModuleContext:
    """Module-wide facts for the rules. Build one per parsed module with :meth:`of`."""

    def __init__(self, wrapper: "MetadataWrapper") -> None:
        self.wrapper = wrapper
        self.module: cst.Module = wrapper.module
        self.nodes: ModuleNodes = module_nodes(self.module)
        self.parents: Mapping[cst.CSTNode, cst.CSTNode] = self.nodes.parents
        self.positions: Mapping[cst.CSTNode, object] = positions(self.module)
        self.bindings: dict[str, str] = {}
        self._ambiguous: set[str] = set()
        #: how many times the module's own scope binds each name, and the names it binds by
        #: anything but an import (:func:`scope_bindings`); whether it may rebind any name by a
        #: string (:func:`rebinds_by_string`)
        self.scope_counts, self.rebound, self.declared_global = scope_bindings(self.nodes)
        self.rebinds_by_string = rebinds_by_string(self.nodes)
        self._read_imports()
        #: the top-level classes by name (the last of a name wins); their facts are read on demand
        self._classes: dict[str, cst.ClassDef] = {}
        self._class_infos: dict[str, ClassInfo] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self._read_definitions()
        self._evidence: dict[int, "ScopeEvidence"] = {}
        self._once: dict[tuple[str, int], object] = {}

    def once(self, what: str, node: cst.CSTNode, compute: "Callable[[], T]") -> "T":
        """``compute()``, remembered for ``node`` under ``what``: the facts of one function or scope
        that every loop in it asks for (a function with 40 loops walked 40 times made the scan of a
        large file quadratic)."""
        key = (what, id(node))
        if key not in self._once:
            self._once[key] = compute()
        return self._once[key]  # type: ignore[return-value]

    def evidence(self, scope: cst.CSTNode) -> "ScopeEvidence":
        """What the code of ``scope`` shows about the kinds of its names (``codemods.evidence``),
        with this module's own spellings of torch, numpy and torch.nn.functional; once per scope."""
        from torchfix.codemods.evidence import ScopeEvidence

        found = self._evidence.get(id(scope))
        if found is None:
            def bound_to(target: str, default: tuple[str, ...]) -> set[str]:
                return {local for local, t in self.bindings.items() if t == target} or set(default)

            found = self._evidence[id(scope)] = ScopeEvidence(
                scope,
                torch_names=bound_to("torch", ("torch",)),
                numpy_names=bound_to("numpy", ("np", "numpy")),
                functional_names=bound_to("torch.nn.functional", ()),
                tensor_annotations=bound_to("torch.Tensor", ()),
                math_names=bound_to("math", ()),
                parents=self.parents,
                module=self.module,
            )
        return found

    _CACHE: "tuple[cst.Module, ModuleContext] | None" = None

    @classmethod
    def of(cls, wrapper: "MetadataWrapper") -> "ModuleContext":
        """The context of ``wrapper``'s module, shared by every rule that looks at it."""
        cached = ModuleContext._CACHE
        if cached is not None and cached[0] is wrapper.module:
            return cached[1]
        context = cls(wrapper)
        ModuleContext._CACHE = (wrapper.module, context)
        return context

    # ------------------------------------------------------------------ imports

    def _bind(self, local: str, target: str) -> None:
        previous = self.bindings.get(local)
        if previous is not None and previous != target:
            self._ambiguous.add(local)
        self.bindings[local] = target

    def _read_imports(self) -> None:
        for node in self.nodes.of_type(cst.Import):
            assert isinstance(node, cst.Import)
            for alias in node.names:
                full = dotted(alias.name)
                if not full or full.split(".")[0] not in LIBRARY_ROOTS:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._bind(alias.asname.name.value, full)
                else:
                    root = full.split(".")[0]
                    self._bind(root, root)
        for node in self.nodes.of_type(cst.ImportFrom):
            assert isinstance(node, cst.ImportFrom)
            if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
                continue
            base = dotted(node.module)
            if not base or base.split(".")[0] not in LIBRARY_ROOTS:
                continue
            for alias in node.names:
                member = dotted(alias.name)
                bound = alias.asname.name if alias.asname else alias.name
                if member and isinstance(bound, cst.Name):
                    self._bind(bound.value, f"{base}.{member}")
        # a library name the module also binds otherwise (`relu = fastops.scale` beside a
        # function's `from torch import relu`), or any name where the module may rebind names
        # by a string (`globals()[...] = `, `exec`), is not known to be the library's
        self._ambiguous |= {local for local in self.bindings if local in self.rebound or self.rebinds_by_string}
        for local in self._ambiguous:
            del self.bindings[local]

    def imported_from(self, module: str, local: str) -> str | None:
        """The member of ``module`` that ``from module import member as local`` binds to
        ``local`` anywhere in this module, else None (for modules the bindings do not follow)."""
        for node in self.nodes.of_type(cst.ImportFrom):
            assert isinstance(node, cst.ImportFrom)
            if node.relative or node.module is None or isinstance(node.names, cst.ImportStar) or dotted(node.module) != module:
                continue
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name) and bound.value == local:
                    return dotted(alias.name)
        return None

    def qualified(self, expr: cst.BaseExpression) -> str | None:
        """``torch.nn.functional.softmax`` for ``F.softmax`` (whatever the aliases), else None."""
        if isinstance(expr, cst.Name):
            return self.bindings.get(expr.value)
        if isinstance(expr, cst.Attribute):
            base = self.qualified(expr.value)
            return f"{base}.{expr.attr.value}" if base else None
        return None

    def spelling(self, qualified: str) -> tuple[cst.BaseExpression, tuple[str, ...]]:
        """How to write ``qualified`` (``torch.where``) here, and the imports it needs: through
        an existing binding of its longest bound prefix, else through ``import torch``."""
        from torchfix.codemods.loops.nodes import dotted_name

        parts = qualified.split(".")
        by_target = {}
        for local, target in sorted(self.bindings.items()):
            by_target.setdefault(target, local)
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            local = by_target.get(prefix)
            if local is not None:
                return dotted_name(".".join([local, *parts[cut:]])), ()
        return dotted_name(qualified), (parts[0],)

    def torch_spelling(self) -> tuple[str, tuple[str, ...]]:
        """The name ``torch`` is bound to here and the imports needed to use it."""
        node, imports = self.spelling("torch")
        assert isinstance(node, cst.Name)
        return node.value, imports

    def kernel_modules(self, extra: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
        """Module bindings a kernel may use: the library modules bound here, plus ``extra``."""
        modules = []
        for local, target in sorted(self.bindings.items()):
            modules.append((local, target))
        for root in extra:
            if root not in self.bindings:
                modules.append((root, root))
        return tuple(dict.fromkeys(modules))

    # ------------------------------------------------------------------ definitions

    def _read_definitions(self) -> None:
        for statement in self.module.body:
            if isinstance(statement, cst.FunctionDef):
                self.functions[statement.name.value] = statement
            elif isinstance(statement, cst.ClassDef):
                self._classes[statement.name.value] = statement

    def _class_info(self, node: cst.ClassDef) -> ClassInfo:
        info = ClassInfo(node)
        if not isinstance(node.body, cst.IndentedBlock):
            return info
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef):
                info.methods[statement.name.value] = statement
        counts: dict[str, int] = {}
        init = info.methods.get("__init__")
        for assigned, value, statement in _self_assignments(init) if init is not None else ():
            counts[assigned] = counts.get(assigned, 0) + 1
            constructor = self.qualified(value.func) if isinstance(value, cst.Call) else None
            info.attributes[assigned] = Attribute(assigned, constructor, value if isinstance(value, cst.Call) else None, statement)
        for assigned, count in counts.items():
            if count > 1:
                info.reassigned.add(assigned)
        # assigned outside `__init__`: in another method, a subclass's `__init__`
        # (`self.act = nn.Softmax(dim=0)`), `model.act = ...` anywhere -- the attribute may hold
        # another value than this class builds (the module does not say which objects are this
        # class's)
        for node, attribute in self._attribute_writes():
            if attribute is None:
                # `setattr(obj, name, v)` with a computed name, `obj.__dict__`: any attribute
                info.reassigned |= set(info.attributes)
            elif init is None or not within(node, init, self.parents):
                info.reassigned.add(attribute)
        return info

    def _attribute_writes(self) -> list[tuple[cst.CSTNode, str | None]]:
        """Every attribute the module may set, with where: ``x.attr = ...`` (``+=``, annotated,
        inside a tuple or list target, a ``for`` / ``with`` target), ``setattr(x, "attr", v)``,
        ``x.add_module("attr", m)`` and the other ``register_*`` methods; None for a name it does
        not spell (``setattr(x, name, v)``, ``x.__dict__``, ``vars(x)``). From the node index."""
        def compute() -> list[tuple[cst.CSTNode, str | None]]:
            found: list[tuple[cst.CSTNode, str | None]] = []
            targets = [getattr(n, "target", None) for n in self.nodes.of_type(cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)]
            targets += [n.asname.name for n in self.nodes.of_type(cst.WithItem) if n.asname is not None]  # type: ignore[attr-defined]
            for target in targets:
                for inner in own_nodes(target) if target is not None else ():
                    if isinstance(inner, cst.Attribute) and _is_store_target(inner, target):
                        found.append((inner, inner.attr.value))
            for call in self.nodes.of_type(cst.Call):
                assert isinstance(call, cst.Call)
                func = call.func
                named = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
                if named in _SETTERS:
                    position = 1 if isinstance(func, cst.Name) else 0  # setattr(obj, "a", v) / obj.add_module("a", m)
                    spelled = call.args[position].value if len(call.args) > position else None
                    literal = spelled.evaluated_value if isinstance(spelled, cst.SimpleString) else None
                    found.append((call, literal if isinstance(literal, str) else None))
                elif named == "vars":
                    found.append((call, None))
            for attribute in self.nodes.of_type(cst.Attribute):
                assert isinstance(attribute, cst.Attribute)
                if attribute.attr.value == "__dict__":
                    found.append((attribute, None))
            return found
        return self.once("attribute writes", self.module, compute)

    # ------------------------------------------------------------------ places

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """(line, column) of ``node``, 1-based."""
        position = self.positions[node]
        return position.start.line, position.start.column + 1  # type: ignore[attr-defined]

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        current = node
        while current in self.parents:
            current = self.parents[current]
            if isinstance(current, cst.FunctionDef):
                return current
            if isinstance(current, (cst.Lambda, cst.ClassDef)):
                return None
        return None

    def enclosing_class(self, function: cst.FunctionDef) -> ClassInfo | None:
        parent = self.parents.get(function)
        if isinstance(parent, cst.IndentedBlock):
            owner = self.parents.get(parent)
            if isinstance(owner, cst.ClassDef):
                return self.class_info(owner.name.value)
        return None

    def class_info(self, name: str) -> ClassInfo | None:
        """The facts of the top-level class ``name`` (its ``__init__`` attributes and methods),
        read the first time a loop in one of its methods asks: most classes hold no loop."""
        info = self._class_infos.get(name)
        if info is None:
            node = self._classes.get(name)
            if node is None:
                return None
            info = self._class_infos[name] = self._class_info(node)
        return info

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost function holding ``node``, else the module."""
        return self.enclosing_function(node) or self.module

    def block_of(self, statement: cst.CSTNode) -> tuple[Sequence[cst.BaseStatement], int] | None:
        """The statement list holding ``statement`` and its index there."""
        parent = self.parents.get(statement)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            body = parent.body
            for index, item in enumerate(body):
                if item is statement:
                    return body, index
        return None

    def call_taking(self, node: cst.CSTNode) -> cst.Call | None:
        """The call whose first argument is ``node`` (``torch.stack([...])`` of a comprehension)."""
        parent = self.parents.get(node)
        found = self.parents.get(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(found, cst.Call) and found.args and found.args[0].value is node:
            return found
        return None

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement (simple line or compound) that holds ``node``."""
        current: cst.CSTNode | None = node
        while current is not None:
            parent = self.parents.get(current)
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                return current
            current = parent
        return None


def _self_assignments(method: cst.FunctionDef):  # noqa: ANN202 - yields (attr, value, statement)
    """``self.X = value`` statements anywhere in ``method`` (the first parameter is ``self``)."""
    params = method.params.params
    if not params:
        return
    self_name = params[0].name.value
    stack: list[cst.CSTNode] = [method.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                targets: list[cst.BaseExpression] = []
                value = None
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                    value = small.value
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                    value = small.value if isinstance(small, cst.AnnAssign) else None
                for target in targets:
                    if (
                        isinstance(target, cst.Attribute)
                        and isinstance(target.value, cst.Name)
                        and target.value.value == self_name
                    ):
                        yield target.attr.value, (value if len(targets) == 1 else None), node
            continue
        stack.extend(node.children)


#: calls that set an attribute named by a string: `setattr(obj, "act", v)`, `obj.add_module("act", m)`
_SETTERS = frozenset({"setattr", "add_module", "register_module", "register_buffer", "register_parameter"})


def _is_store_target(attribute: cst.Attribute, target: cst.CSTNode) -> bool:
    """Whether ``attribute`` is itself stored to in ``target`` (``self.a`` in ``self.a, b = ...``),
    not read on the way (``self.a`` in ``self.a[0] = ...`` or ``self.a.b = ...``)."""
    if attribute is target:
        return True
    stack: list[cst.CSTNode] = [target]
    while stack:
        node = stack.pop()
        if node is attribute:
            return True
        if isinstance(node, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in node.elements)
        elif isinstance(node, cst.StarredElement):
            stack.append(node.value)
    return False


#: names through which code may bind a module's globals without naming them
_BINDS_BY_STRING = frozenset({"globals", "exec", "eval", "compile", "__import__", "__builtins__"})
#: attributes that reach a namespace through a frame (``sys._getframe().f_locals``)
FRAME_ATTRIBUTES = frozenset({"_getframe", "f_globals", "f_locals", "currentframe"})
#: what a read of ``globals()`` may do with it (``globals()[name](...)`` looks a class up)
_GLOBALS_READS = frozenset({"get", "keys", "items", "values", "copy"})


def _reads_globals_only(call: cst.Call, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """Whether a ``globals()`` call is only read: subscripted where nothing stores or deletes,
    asked for ``get`` / ``keys`` / ..., or the right side of ``in``."""
    parent = parents.get(call)
    if isinstance(parent, cst.Attribute) and parent.value is call:
        return parent.attr.value in _GLOBALS_READS
    if isinstance(parent, cst.ComparisonTarget):
        return isinstance(parent.operator, (cst.In, cst.NotIn))
    if isinstance(parent, cst.Subscript) and parent.value is call:
        holder = parents.get(parent)
        return not isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del, cst.For, cst.WithItem, cst.Element, cst.StarredElement))
    return False


def rebinds_by_string(nodes: ModuleNodes) -> bool:
    """Whether the module may rebind one of its names without naming it: ``globals()`` other
    than read, ``exec``/``eval``/``compile`` (as names: `model.eval()` is a method),
    ``sys.modules``, frames, a ``match`` statement (its patterns bind), or ``vars()`` /
    ``locals()`` at the module's own scope. Answered from the module's node index: no walk."""
    parents = nodes.parents
    for name in nodes.of_type(cst.Name):
        assert isinstance(name, cst.Name)
        if name.value not in _BINDS_BY_STRING:
            continue
        parent = parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            continue  # an attribute's own name is no variable
        if (
            name.value == "globals" and isinstance(parent, cst.Call) and parent.func is name and not parent.args
            and _reads_globals_only(parent, parents)
        ):
            continue  # a look-up in the module's names (`globals()[name]`), not a binding
        return True
    for attribute in nodes.of_type(cst.Attribute):
        assert isinstance(attribute, cst.Attribute)
        if attribute.attr.value in FRAME_ATTRIBUTES or (
            attribute.attr.value == "modules" and isinstance(attribute.value, cst.Name) and attribute.value.value == "sys"
        ):
            return True
    if nodes.of_type(cst.Match):
        return True
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("vars", "locals") and not node.args
        for node in own_nodes(nodes.module)
    )


def scope_bindings(nodes: ModuleNodes) -> "tuple[dict[str, int], set[str], set[str]]":
    """How many times the module's own scope binds each name (``def``, ``class``, assignment,
    import, ``for`` / ``with`` / ``except`` targets, walrus, ``del``; function and class bodies
    left out, every Name in a target position counted -- an attribute target too, cautiously:
    ``mymodule.f = g`` rebinds the module's ``f``), the names bound there by anything but an
    import (or declared ``global`` anywhere), and the names declared ``global`` anywhere ("*"
    where a star import may bind any name)."""
    counts: dict[str, int] = {}
    rebound: set[str] = set()
    declared: set[str] = set()

    def bind(name: str, imported: bool = False) -> None:
        counts[name] = counts.get(name, 0) + 1
        if not imported:
            rebound.add(name)

    for node in own_nodes(nodes.module):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            bind(node.name.value)
        targets: list[cst.CSTNode] = []
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets = [node.asname.name]
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            targets = [node.name.name]
        elif isinstance(node, cst.Del):
            targets = [node.target]
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                bind(cst.Module([]).code_for_node(bound).split(".")[0], imported=True)
        for target in targets:
            for name in own_nodes(target):
                if isinstance(name, cst.Name):
                    bind(name.value)
    for statement in nodes.of_type(cst.Global):
        assert isinstance(statement, cst.Global)
        names = {item.name.value for item in statement.names}
        rebound |= names
        declared |= names
    if any(isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar) for node in nodes.of_type(cst.ImportFrom)):
        declared.add("*")  # (a library name is still taken for its import: see helpers)
    return counts, rebound, declared


#: every builtin name
BUILTINS = frozenset(dir(builtins))


def shadowed_builtins(context: ModuleContext) -> frozenset[str]:
    """Builtin names the module binds somewhere (a parameter, an assignment, a def, an import):
    a call of such a name may be of anything. A star import may bind any of them."""
    def compute() -> frozenset[str]:
        if any(isinstance(n.names, cst.ImportStar) for n in context.nodes.of_type(cst.ImportFrom)):  # type: ignore[attr-defined]
            return BUILTINS
        bound = assigned_names(context.module) | set(context.bindings)
        for node in context.nodes.of_type(cst.FunctionDef, cst.ClassDef):
            bound.add(node.name.value)  # type: ignore[attr-defined]
        for node in context.nodes.of_type(cst.Param):
            bound.add(node.name.value)  # type: ignore[attr-defined]  # lambdas' too
        for node in context.nodes.of_type(cst.CompFor):
            bound |= target_names(node.target)  # type: ignore[attr-defined]
        for node in context.nodes.of_type(cst.ExceptHandler):
            if node.name is not None and isinstance(node.name.name, cst.Name):  # type: ignore[attr-defined]
                bound.add(node.name.name.value)  # type: ignore[attr-defined]
        return frozenset(bound) & BUILTINS
    return context.once("builtins shadowed", context.module, compute)
