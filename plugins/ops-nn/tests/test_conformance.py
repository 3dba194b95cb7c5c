"""The opsdk conformance suite over every op this plugin registers."""

from opsdk.testing import conformance_tests

test_conformance = conformance_tests("ops-nn")
