"""``mxnext onnx export``: an MXNet checkpoint (``-symbol.json`` + ``.params``) to ONNX."""

from __future__ import annotations

import click

__all__ = ["onnx"]


def _input(text: str):
    name, sep, dims = text.rpartition(":")
    try:
        shape = tuple(int(d) for d in dims.split(","))
    except ValueError:
        shape = ()
    if not sep or not name or not shape:
        raise click.BadParameter(f"{text!r}: expected NAME:D1,D2,... such as data:1,3,224,224")
    return name, shape


@click.group()
def onnx():
    """ONNX export (mx.onnx)."""


@onnx.command()
@click.argument("symbol_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("params_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--input", "inputs", multiple=True, required=True, metavar="NAME:SHAPE",
              help="A data input and its shape, e.g. data:1,3,224,224 (repeat for each).")
@click.option("--dtype", default="float32", show_default=True, help="The inputs' dtype.")
@click.option("-o", "--output", default="model.onnx", show_default=True,
              type=click.Path(dir_okay=False), help="The ONNX file to write.")
@click.option("--opset", type=int, default=None,
              help="ONNX opset (13 to the installed onnx's latest; default: the latest).")
@click.option("--dynamic", is_flag=True, help="Leave every input dimension free.")
def export(symbol_file, params_file, inputs, dtype, output, opset, dynamic):
    """Export SYMBOL_FILE (PREFIX-symbol.json) with PARAMS_FILE (PREFIX-0000.params)."""
    import mxnext as mx
    from mxnext.onnx._graph import data_inputs
    shapes = dict(_input(text) for text in inputs)
    sym = mx.sym.load(symbol_file)
    params = {k.split(":", 1)[-1]: v for k, v in (mx.nd.load(params_file) or {}).items()}
    names = data_inputs(sym, params)
    if sorted(shapes) != sorted(names):
        raise click.BadParameter(f"the model's data inputs are {names}, --input gives "
                                 f"{sorted(shapes)}", param_hint="--input")
    try:
        mx.onnx.export_model(sym, params, [shapes[n] for n in names], dtype, output,
                             dynamic=dynamic, opset_version=opset)
    except ImportError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"wrote {output} (inputs {', '.join(f'{n}:{shapes[n]}' for n in names)})")
