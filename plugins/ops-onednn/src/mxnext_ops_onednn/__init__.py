"""mxnext-ops-onednn: oneDNN kernels (``FCompute<cpu>``) that outrank ops-nn's for the calls
they cover and hand every other call to ops-nn's kernel."""
