"""MXNet's own training scripts, kept verbatim: they import ``mxnet``, so pytest does not
collect them here; tests/test_mxnet_train.py runs each through ``python -m mxnext run``."""

collect_ignore = ["test_bucketing.py"]
