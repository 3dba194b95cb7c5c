"""pytest plugin (``pytest11`` entry point ``opsdk``): the operator conformance suite.

A plugin's test module writes ``test_conformance = conformance_tests("ops-tensor")``
and gets one test per (op, example, check) for every op that plugin defines, where the
check applies to the op and the example (``_conformance.inapplicable``).
"""

from __future__ import annotations

import pytest

_MARK = pytest.mark.opsdk_conformance


def _cases(plugin_name, ops, skip_checks):
    """One case per (op, example, check) where the check applies; one skipped record naming
    every op that has no example (so none of its checks can run)."""
    from mxnext import ops as registry
    from ._conformance import CHECKS, inapplicable
    from ._examples import examples_for
    defs = [d for d in registry.list_ops() if d.provider == plugin_name]
    if ops is not None:
        defs = [d for d in defs if d.name in set(ops)]
    if not defs:
        raise LookupError(f"conformance_tests: plugin {plugin_name!r} defines no ops "
                          f"(is it installed and loaded?)")
    checks = [c for c in CHECKS if c not in skip_checks]
    without = []
    for opdef in defs:
        examples, why = examples_for(opdef)
        if not examples:
            without.append(f"{opdef.name} ({why})")
        for k, ex in enumerate(examples):
            for check in checks:
                if inapplicable(check, opdef, ex) is None:
                    yield pytest.param(opdef.name, ex, check, id=f"{opdef.name}-{k}-{check}",
                                       marks=_MARK)
    if without:
        skip = pytest.mark.skip(reason=f"{len(without)} op(s) have no example, so no check "
                                       f"runs for them: {'; '.join(without)}")
        yield pytest.param(None, None, None, id="ops-without-example", marks=[_MARK, skip])


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
