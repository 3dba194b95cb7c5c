"""The ``mxnext`` command.

Exit codes: 0 ok, 1 a check failed (or an mxnext error), 2 usage error.
Modules under ``mxnext_cli`` import only click at module level; ``mxnext`` is
imported, and its plugins loaded, once a command runs, so ``mxnext --version``
loads no plugin.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import warnings

import click

from . import devices, info, install, kvstores, onnx_cmd, ops, plugins_cmd, run_cmd, scaffold

__all__ = ["main"]


class MainGroup(click.Group):
    """Builtin commands plus those plugins add through ``mxnext_cli_commands(group)``.

    Plugin commands are looked up only when a name is not a builtin (or when
    listing commands for ``--help``), so builtins never wait for plugins.
    """

    _plugin_commands_added = False

    def _add_plugin_commands(self, ctx) -> None:
        if self._plugin_commands_added:
            return
        self._plugin_commands_added = True
        from mxnext import plugins
        from mxnext.base import describe_error
        plugins.ensure_loaded()
        hook = plugins.manager().hook.mxnext_cli_commands
        for impl in hook.get_hookimpls():  # one at a time: a broken plugin costs only its commands
            try:
                impl.function(*(self for _ in impl.argnames))
            except (Exception, SystemExit) as e:
                click.echo(f"warning: plugin {impl.plugin_name!r} failed to add commands: "
                           f"{describe_error(e)}", err=True)

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None:
            self._add_plugin_commands(ctx)
            cmd = super().get_command(ctx, cmd_name)
        return cmd

    def list_commands(self, ctx):
        self._add_plugin_commands(ctx)
        return super().list_commands(ctx)

    def invoke(self, ctx):
        warnings.formatwarning = _one_line_warning  # plugin load failures warn while loading
        try:  # only reached once a command runs
            import mxnext
            mxnext.plugins.ensure_loaded()  # what commands read, plugins register
        except Exception as e:  # e.g. a plugin named in MXNEXT_PLUGINS failed to load
            raise click.ClickException(f"loading mxnext failed: {type(e).__name__}: {e}") from e
        MXNetError = mxnext.MXNetError
        try:
            return super().invoke(ctx)
        except MXNetError as e:
            raise click.ClickException(str(e)) from e


def _print_version(ctx, param, value):
    if not value or ctx.resilient_parsing:
        return
    spec = importlib.util.find_spec("mxnext")  # locates the package without importing it
    where = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else "?"
    click.echo(f"mxnext {importlib.metadata.version('mxnext-core')} at {where} "
               f"(Python {platform.python_version()})")
    ctx.exit()


@click.group(cls=MainGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Print the version in one line and exit.")
def main():
    """mxnext: run MXNet programs; list, inspect, scaffold, install, uninstall and check
    operator plugins."""


def _one_line_warning(message, category, filename, lineno, line=None):
    return f"warning: {message}\n"


main.add_command(ops.ops)
main.add_command(plugins_cmd.plugins)
main.add_command(devices.devices)
main.add_command(kvstores.kvstores)
main.add_command(scaffold.new)
main.add_command(install.install)
main.add_command(install.uninstall)
main.add_command(info.info)
main.add_command(run_cmd.run)
main.add_command(onnx_cmd.onnx)
