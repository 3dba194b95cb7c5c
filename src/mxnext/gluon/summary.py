"""``Block.summary``: MXNet 1.9's table of each layer's output shape and parameter count,
gathered by forward hooks during one forward."""

from collections import OrderedDict

from ..ndarray import NDArray

_LINE = "{:>20}  {:>42} {:>15}"


def _shape_str(args):
    """The shapes of nested ``args`` as MXNet prints them (``(1, 10)``, ``(1, 3), (2,)``)."""
    def shapes(a):
        if isinstance(a, (list, tuple)):
            return [shapes(x) for x in a]
        return a.shape if isinstance(a, NDArray) else a
    got = shapes(args)
    return str(got)[1:-1] if isinstance(got, list) else str(got)


def print_summary(block, inputs):
    """(Containers, ``_summary_row = False``, get no row: their children do.)"""
    rows = OrderedDict(Input=(_shape_str(list(inputs)), 0, 0, 0))
    seen, hooks = set(), []

    def hook(b, _, outputs):
        count = trainable = shared = 0
        for p in b.params.values():
            size = p.data().size
            count += size
            trainable += 0 if p.grad_req == "null" else size
            if p in seen:
                shared += size
            seen.add(p)
        rows[f"{type(b).__name__}-{len(rows)}"] = (_shape_str(outputs), count, trainable,
                                                    shared)

    def register(b):
        if getattr(b, "_active", False):
            raise AssertionError(f'"{b.name}" must not be hybridized to print summary.')
        if getattr(b, "_summary_row", True):
            hooks.append(b.register_forward_hook(hook))
    try:
        block.apply(register)
        block(*inputs)
        print("-" * 80)
        print(_LINE.format("Layer (type)", "Output Shape", "Param #"))
        print("=" * 80)
        for name, (shape, count, _, _) in rows.items():
            print(_LINE.format(name, shape, count))
        total = sum(r[1] for r in rows.values())
        trainable = sum(r[2] for r in rows.values())
        shared = sum(r[3] for r in rows.values())
        print("=" * 80)
        print("Parameters in forward computation graph, duplicate included")
        print(f"   Total params: {total}")
        print(f"   Trainable params: {trainable}")
        print(f"   Non-trainable params: {total - trainable}")
        print(f"Shared params in forward computation graph: {shared}")
        print(f"Unique parameters in model: {total - shared}")
        print("-" * 80)
    finally:
        for h in hooks:
            h.detach()
