"""``mx.graph.infer``: the public face of ``mxnext._runtime.graph.infer``.

Shape and dtype inference over an ``IndexedGraph`` (MXNet's ``InferShape``/``InferType``).
"""

from mxnext._runtime.graph.infer import (
    infer_shapes,
    infer_types,
    match_names,
    match_positional,
    split,
    shape_known,
    parse_shape,
    merge_dims,
    merge_dtype,
)

__all__ = ["infer_shapes", "infer_types", "match_names", "match_positional", "split",
           "shape_known", "parse_shape", "merge_dims", "merge_dtype"]
