"""Who registers: the provider (plugin) each registry entry is attributed to, and the
callbacks told of each op that gets defined."""

from __future__ import annotations

import contextlib
import threading

from .firstuse import fill as _fill

__all__ = ["USER", "claim_package", "current_provider", "providing", "on_new_op", "recording"]

USER = "__main__"
"""The provider of entries made outside any ``providing()`` block (user scripts)."""

_packages: dict[str, str] = {}    # top-level package -> the plugin that claimed it
_callbacks: list = []


class _State(threading.local):
    provider = USER
    pending: list | None = None   # new ops to announce when the providing() block ends
    touched: set | None = None    # op names entries are set on, inside recording()

_state = _State()


def claim_package(package: str, plugin: str) -> None:
    """Attribute to ``plugin`` the entries made outside ``providing()`` by code of top-level
    ``package`` (an op module of the plugin imported before plugins loaded)."""
    _packages[package.partition(".")[0]] = plugin


def current_provider(module: str | None = None) -> str:
    """The provider new entries are attributed to: the plugin being loaded (a
    ``providing()`` block), else the plugin that claimed the package of ``module`` (the
    registering code's module, when known), else ``USER``. Plugins load first: loading is
    what claims packages."""
    _fill()
    provider = _state.provider
    if provider == USER and module:
        return _packages.get(module.partition(".")[0], USER)
    return provider


def on_new_op(callback) -> None:
    """Call ``callback(opdef)`` whenever an op gets defined from now on (ops defined
    earlier are in ``list_ops()``).

    Inside ``providing()`` (plugin loading) the call comes when the block ends,
    so the op is complete; outside it comes at definition, before the builder
    chain has set the rest, so frontends should read op fields lazily.
    """
    _callbacks.append(callback)


def _announce(d) -> None:
    if _state.pending is not None:
        _state.pending.append(d)
    else:
        for cb in list(_callbacks):
            cb(d)


@contextlib.contextmanager
def providing(plugin_name: str):
    """Attribute every entry made inside the block to ``plugin_name``."""
    old, old_pending = _state.provider, _state.pending
    _state.provider, _state.pending = plugin_name, []
    try:
        yield
    finally:
        pending = _state.pending
        _state.provider, _state.pending = old, old_pending
        for d in pending:
            if d.provider is not None:
                _announce(d)


@contextlib.contextmanager
def recording():
    """Collect, in the set yielded, the op names and aliases that the entries made inside
    the block (in this thread) are set on."""
    old, _state.touched = _state.touched, set()
    try:
        yield _state.touched
    finally:
        _state.touched = old
