"""``mxnext run``: ``python -m mxnext run`` as a command of the console script."""

from __future__ import annotations

import sys

import click

__all__ = ["run"]


@click.command(context_settings={"ignore_unknown_options": True,
                                 "allow_interspersed_args": False, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(args):
    """Run an MXNet program unmodified: SCRIPT.py [ARGS...] or -m MODULE [ARGS...]."""
    from mxnext.__main__ import main as run_main
    try:
        code = run_main(["run", *args])
    except SystemExit:
        raise
    except BaseException:  # the program's own error: its traceback, as python prints it
        import traceback
        traceback.print_exc()
        code = 1
    sys.exit(code)
