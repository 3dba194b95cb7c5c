"""The opsdk conformance suite over the ops this plugin covers, their examples run with its
kernels in place of ops-nn's."""

from opsdk.testing import conformance_tests

from mxnext_ops_onednn.plugin import COVERED

test_conformance = conformance_tests("ops-nn", ops=COVERED)


def test_the_suite_runs_the_onednn_kernels():
    from mxnext import ops as registry
    providers = {op: registry.get(op).attrs["FCompute<cpu>"].provider for op in COVERED}
    assert providers == dict.fromkeys(COVERED, "ops-onednn")
