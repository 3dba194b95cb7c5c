"""MXNet 1.9's ``gluon.block`` module: ``Block``, ``HybridBlock`` and ``SymbolBlock``,
re-exported from the files that hold them."""

from ._block import Block
from ._hybrid_block import HybridBlock
from ._symbol_block import SymbolBlock
# helpers code written for MXNet imports from mxnet.gluon.block (not in __all__)
from ._block_scope import _BlockScope as _BlockScope
from ._nested import _flatten as _flatten, _regroup as _regroup

__all__ = ["Block", "HybridBlock", "SymbolBlock"]
