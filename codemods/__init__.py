"""The transform passes: one module per rule, plus shared analysis helpers.

Data path: a pass reads a parsed module and proposes rewrites (see ``codemods.base``); it never
writes files and never runs code. ``codemods.registry`` lists the rules.
"""
