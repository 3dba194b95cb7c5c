"""pytest plugin (``pytest11`` entry point ``opsdk``): the operator conformance suite.

A plugin's test module writes ``test_conformance = conformance_tests("ops-tensor")``
and gets one test per (op, example, check) for every op that plugin defines.
"""

from __future__ import annotations

import pytest

_MARK = pytest.mark.opsdk_conformance


def _cases(plugin_name, ops, skip_checks):
    from mxnext import registry
    from ._conformance import CHECKS
    from ._examples import examples_for
    defs = [d for d in registry.list_ops() if d.provider == plugin_name]
    if ops is not None:
        defs = [d for d in defs if d.name in set(ops)]
    if not defs:
        raise LookupError(f"conformance_tests: plugin {plugin_name!r} defines no ops "
                          f"(is it installed and loaded?)")
    for opdef in defs:
        examples, why = examples_for(opdef)
        for check in CHECKS:
            if check in skip_checks:
                continue
            if not examples:
                yield pytest.param(opdef.name, None, check, id=f"{opdef.name}-{check}",
                                   marks=[_MARK, pytest.mark.skip(reason=f"no example: {why}")])
                continue
            for k, ex in enumerate(examples):
                yield pytest.param(opdef.name, ex, check, id=f"{opdef.name}-{k}-{check}",
                                   marks=_MARK)


def conformance_tests(plugin_name: str, ops=None, skip_checks=()):
    """A parametrized test function covering every op ``plugin_name`` defines.

    ``ops`` limits the suite to some op names; ``skip_checks`` drops whole
    checks (names from ``opsdk.testing.CHECKS``).
    """
    @pytest.mark.parametrize("op_name, example, check",
                             list(_cases(plugin_name, ops, skip_checks)))
    def test_op_conformance(op_name, example, check):
        from ._conformance import run_check
        run_check(op_name, example, check)
    test_op_conformance.__name__ = f"test_conformance_{plugin_name.replace('-', '_')}"
    return test_op_conformance


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "opsdk_conformance: a generated opsdk operator conformance test")
