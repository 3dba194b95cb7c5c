"""The opsdk conformance suite over the ops this plugin covers, their examples run with its
kernels in place of ops-nn's: once as installed (the measured rules send the examples' small
calls of some ops to ops-nn) and once more for the ops with rules, the rules dropped, so
oneDNN takes every call it covers."""

import pytest
from opsdk.testing import conformance_tests

from mxnext_ops_onednn import _dispatch
from mxnext_ops_onednn.plugin import COVERED

RULED = ["Activation", "_backward_Activation", "BatchNorm", "_backward_BatchNorm", "LRN",
         "_backward_LRN", "Convolution", "_backward_Convolution", "Deconvolution",
         "FullyConnected", "_backward_FullyConnected", "Pooling", "_backward_Pooling",
         "sgd_update", "multi_sgd_update"]
test_conformance = conformance_tests("ops-nn", ops=COVERED)
test_conformance_without_rules = pytest.mark.usefixtures("no_rules")(
    conformance_tests("ops-nn", ops=RULED))


def test_the_ops_with_rules_are_those_rerun():
    from mxnext import ops as registry
    for op in COVERED:
        registry.get(op).attrs["FCompute<cpu>"]         # the kernel modules are imported
    assert {key.split(":")[0] for key in _dispatch.wins} == set(RULED)   # op or op:part


def test_the_suite_runs_the_onednn_kernels():
    from mxnext import ops as registry
    providers = {op: registry.get(op).attrs["FCompute<cpu>"].provider for op in COVERED}
    assert providers == dict.fromkeys(COVERED, "ops-onednn")
