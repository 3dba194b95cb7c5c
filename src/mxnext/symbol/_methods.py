"""Symbol methods that apply ops (MXNet's fluent methods): ``s.sum(axis=1)`` is
``mx.sym.sum(s, axis=1)``, named as that function names its symbols (``sum0``)."""

from __future__ import annotations

from . import _create

__all__ = ["OpMethods"]

# method name -> the mx.sym function it calls (the same name unless given)
_FLUENT = """
reshape reshape_like zeros_like ones_like broadcast_axes repeat pad swapaxes split slice
slice_axis slice_like take one_hot pick sort topk argsort argmax argmax_channel argmin clip
abs sign shape_array size_array broadcast_to broadcast_like tile transpose flip
depth_to_space space_to_depth sum nansum prod nanprod mean max min norm round rint fix floor
ceil trunc sin cos tan arcsin arccos arctan degrees radians sinh cosh tanh arcsinh arccosh
arctanh exp expm1 log log10 log2 log1p sqrt rsqrt cbrt rcbrt square reciprocal relu sigmoid
softmax log_softmax softmin
""".split()


def _method(fname):
    def method(self, *args, **kwargs):
        return _create.op_function(fname)(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = fname
    method.__doc__ = f"Same as ``mx.sym.{fname}(self, ...)``."
    return method


class OpMethods:
    """MXNet 1.x's Symbol methods that are ops."""

    __slots__ = ()

    def astype(self, *args, **kwargs):
        """Same as ``mx.sym.cast(self, ...)``."""
        return _create.op_function("cast")(self, *args, **kwargs)

    def flatten(self, inplace=False, **kwargs):
        """Same as ``mx.sym.flatten(self)`` (``inplace`` is NDArray's and ignored)."""
        return _create.op_function("flatten")(self, **kwargs)

    def expand_dims(self, axis, inplace=False, **kwargs):
        """Same as ``mx.sym.expand_dims(self, axis=axis)``."""
        return _create.op_function("expand_dims")(self, axis=axis, **kwargs)

    def squeeze(self, axis=None, inplace=False, **kwargs):
        """Same as ``mx.sym.squeeze(self, axis=axis)``."""
        return _create.op_function("squeeze")(self, axis=axis, **kwargs)

    def diag(self, k=0, **kwargs):
        """Same as ``mx.sym.diag(self, k=k)``."""
        return _create.op_function("diag")(self, k=k, **kwargs)

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        """Same as ``mx.sym.split_v2(self, ...)``."""
        return split_v2(self, indices_or_sections, axis, squeeze_axis)


for _name in _FLUENT:
    setattr(OpMethods, _name, _method(_name))


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int: ``split``) or at the given
    indices (a tuple: one ``slice_axis`` per piece, grouped)."""
    if isinstance(indices_or_sections, int):
        return _create.op_function("split")(data=ary, num_outputs=indices_or_sections,
                                            axis=axis, squeeze_axis=squeeze_axis)
    if not isinstance(indices_or_sections, tuple):
        raise ValueError("split_v2: indices_or_sections must be an int or a tuple of ints")
    cuts = list(indices_or_sections)
    pieces = []
    for begin, end in zip([0] + cuts, cuts + [None]):
        piece = _create.op_function("slice_axis")(data=ary, axis=axis, begin=begin, end=end)
        if squeeze_axis:
            piece = _create.op_function("squeeze")(data=piece, axis=(axis,))
        pieces.append(piece)
    return type(ary)([e for p in pieces for e in p._outputs])     # Group(pieces)
