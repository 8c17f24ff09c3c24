"""The loop model every loop rule reads: facts computed once per loop, a lifter, a callee table.

Data path inside ``codemods``::

    module.py    ModuleContext: one walk of the module (parents, nodes by type, import bindings,
                 classes' ``__init__`` attributes, same-file functions), positions on demand
    domain.py    Domain: what a ``for`` iterates (range / enumerate / zip / direct) and its extent
    facts.py     LoopFacts: the domain, every use of the loop variables, the body's statements
                 classified (temporary, store, accumulation, append, guard, ...), inits found in
                 the enclosing blocks, what is read after the loop
    callees.py   the table of known callees (qualified name -> how it batches)
    evidence.py  what kind of value a name holds (tensor, ndarray, list, number) and its rank
    lift.py      per-sample expressions and statements -> batched CST nodes
    kernels.py   the verification kernel of a candidate: the slice of the function the loop needs
                 (prelude), the old and new statements, inputs with their kinds, outputs

A rule is a small module on top: it asks :func:`facts.loop_facts` for a loop's facts, matches the
shape it rewrites, and returns a ladder of candidates built by ``lift`` and ``kernels``.
"""
