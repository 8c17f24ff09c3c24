"""The equivalence checker: builds inputs, runs old and new code boxed, compares, returns a verdict.

It imports nothing from ``torchfix`` or ``codemods``; ``equivalence.kernel`` holds the small data
types a pass uses to state its proof obligation.
"""
