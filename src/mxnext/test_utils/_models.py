"""``download_model``: the pretrained ImageNet checkpoints MXNet's tests fetch from
data.mxnet.io, as ``<name>-symbol.json`` and ``<name>-0000.params``."""

from __future__ import annotations

import os

from ._data import download

__all__ = ["download_model"]

_BASE = "http://data.mxnet.io/models/"


def _entry(folder: str, stem: str) -> dict:
    return {"symbol": f"{_BASE}{folder}/{stem}-symbol.json",
            "params": f"{_BASE}{folder}/{stem}-0000.params"}


# MXNet 1.9's catalogue: model name -> where its symbol and parameters are published
MODELS = {
    "imagenet1k-inception-bn": {
        "symbol": _BASE + "imagenet/inception-bn/Inception-BN-symbol.json",
        "params": _BASE + "imagenet/inception-bn/Inception-BN-0126.params"},
    **{f"imagenet1k-resnet-{n}": _entry(f"imagenet/resnet/{n}-layers", f"resnet-{n}")
       for n in (18, 34, 50, 101, 152)},
    **{f"imagenet1k-resnext-{n}": _entry(f"imagenet/resnext/{n}-layers", f"resnext-{n}")
       for n in (50, 101)},
    "imagenet1k-resnext-101-64x4d": _entry("imagenet/resnext/101-layers",
                                           "resnext-101-64x4d"),
    "imagenet11k-resnet-152": _entry("imagenet-11k/resnet-152", "resnet-152"),
    "imagenet11k-place365ch-resnet-152": _entry("imagenet-11k-place365-ch", "resnet-152"),
    "imagenet11k-place365ch-resnet-50": _entry("imagenet-11k-place365-ch", "resnet-50"),
}


def download_model(model_name, dst_dir="./", meta_info=None):
    """Fetch ``model_name`` into ``dst_dir`` as ``<model_name>-symbol.json`` and
    ``<model_name>-0000.params`` (files already there are kept) and return
    ``(dst_dir/model_name, 0)``, the prefix and epoch ``mx.model.load_checkpoint`` takes;
    ``(None, 0)`` for a name missing from ``meta_info`` (default: MXNet's catalogue,
    ``{name: {'symbol': url, 'params': url}}``)."""
    meta_info = dict(MODELS if meta_info is None else meta_info)
    if model_name not in meta_info:
        return None, 0
    meta = dict(meta_info[model_name])
    missing = [k for k in ("symbol", "params") if k not in meta]
    if missing:
        raise ValueError(f"download_model: meta_info[{model_name!r}] expected the keys "
                         f"'symbol' and 'params' (URLs), missing {missing}")
    os.makedirs(dst_dir, exist_ok=True)
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    download(meta["params"], prefix + "-0000.params")
    return prefix, 0
