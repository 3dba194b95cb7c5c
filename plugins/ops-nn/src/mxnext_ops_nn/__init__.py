"""MXNet 1.x neural-network operators for mxnext (plugin ``ops-nn``)."""
