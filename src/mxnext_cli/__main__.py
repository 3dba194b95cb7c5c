"""``python -m mxnext_cli``: the ``mxnext`` command for interpreters without the console script."""

from .main import main

main()
