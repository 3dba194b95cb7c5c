"""Terminal output: aligned tables, colour only on a TTY, and JSON for scripts."""

from __future__ import annotations

import json

import click

__all__ = ["table", "emit_json", "heading", "status_style"]

_STATUS_COLOURS = {"loaded": "green", "ok": "green", "failed": "red", "disabled": "yellow",
                   "yes": "green", "no": "yellow"}


def table(headers, rows, styles=None, indent: int = 0) -> None:
    """Echo ``rows`` (lists of str) under ``headers`` with aligned columns.

    ``styles`` maps a column index to a function ``cell -> click.style kwargs``.
    Widths are measured on the plain text; click.echo strips the colour codes
    when stdout is not a terminal, so pipes and files get plain aligned text.
    """
    rows = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    pad = " " * indent
    click.echo(pad + _line([click.style(h, bold=True) for h in headers], headers, widths))
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            kw = styles[i](cell) if styles and i in styles else None
            cells.append(click.style(cell, **kw) if kw else cell)
        click.echo(pad + _line(cells, row, widths))


def _line(cells, plain, widths) -> str:
    last = len(cells) - 1
    return "  ".join(c if i == last else c + " " * (widths[i] - len(p))
                     for i, (c, p) in enumerate(zip(cells, plain))).rstrip()


def status_style(cell: str):
    colour = _STATUS_COLOURS.get(cell.split(":")[0].strip())
    return {"fg": colour} if colour else None


def heading(text: str) -> None:
    click.echo(click.style(text, bold=True))


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False, default=str))
