"""``opsdk.testing``: the test kit for operator authors.

Run ops straight from their ``OpDef`` on numpy arrays (no NDArray frontend),
check forward results and gradients, and generate the conformance suite for
every op a plugin registers.

Conformance examples: attribute key ``TExamples``
-------------------------------------------------
An op lists the inputs the conformance suite runs it on::

    register_op("take")...set_attr("TExamples", [
        {"inputs": [(4, 3), (2, 2)],          # input shapes (or numpy arrays, used as given)
         "dtype": ["float32", "int64"],       # one dtype for all inputs, or one per input
         "domain": [(-1, 1), (0, 4)],         # value range [low, high), one or per input
         "params": {"axis": 0},               # kwargs (MXNet strings accepted)
         "grad": [0]},                        # True/False, or the input indices to check
    ])

Every key is optional: ``inputs`` defaults to ``(2, 3)`` for each input,
``dtype`` to ``"float32"``, ``domain`` to ``(-1, 1)`` (integer dtypes draw
integers in ``[low, high)``), ``params`` to ``{}``, ``grad`` to True (only
float inputs of ops with ``FGradient`` are checked). Further keys:
``rtol``/``atol`` (gradient check tolerances, default 1e-2 / 1e-3),
``ref`` a numpy reference ``fn(*inputs, **params) -> array or list`` compared
with the forward result, ``int_ref`` the same for the integer run of the
``dtypes`` check where it differs from float64 truncated, ``seed`` for the
input generator.
The ``dtypes`` check runs each forward op on int32 inputs drawn from the
example's floating domains: rejected by ``FInferType`` (``opsdk.FloatOnly``)
or computed as float64 truncated back. All-zero integer outputs where float64
gives fractions fail unless the op sets ``TTruncatesIntegers`` (``TRUNCATES_KEY``).
An op without ``TExamples`` gets one default example (every input ``(2, 3)``
float32) when its input count is fixed and its params all have defaults;
otherwise it gets no conformance tests, and one skipped test of the suite
names every such op. Each check is generated only for the (op, example)
pairs it applies to (see ``_conformance.inapplicable``).

Use in a plugin's tests::

    from opsdk.testing import conformance_tests
    test_conformance = conformance_tests("ops-tensor")
"""

from importlib import import_module

# Re-exports load on first use: the pytest plugin imports this package in every
# pytest run, which must not pay for (or break on) importing mxnext.
_EXPORTS = {
    "_harness": ["infer", "make_context", "run_op", "op_def", "parse"],
    "_graph": ["eval_gradients"],
    "_checks": ["check_numeric_gradient", "check_forward", "check_backward",
                "numeric_gradient"],
    "_examples": ["EXAMPLES_KEY", "TRUNCATES_KEY", "Example", "examples_for", "make_inputs"],
    "_conformance": ["CHECKS", "run_check"],
    "_device": ["DEVICE_CHECKS", "run_device_checks", "device_conformance_tests",
                "device_unusable"],
    "_consistency": ["LAYERS", "device_consistency_tests"],
    "pytest_plugin": ["conformance_tests"],
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'opsdk.testing' has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
