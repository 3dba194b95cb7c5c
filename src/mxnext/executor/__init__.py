"""The graph executor (DESIGN.md §7): a ``Program`` (a Symbol's graph compiled by the
passes of ``mxnext._runtime.graph``: inference, gradient, CSE, memory plan) and the
``Executor`` that runs it on arrays as pre-built engine operators."""

from . import cached_op
