"""MXNet 1.9's ``gluon.utils``: splitting a batch over devices, global-norm clipping, file
checks and download, and the small helpers blocks use (hook handles, indentation)."""

from __future__ import annotations

import hashlib
import os
import warnings
import weakref

import numpy as np

from .. import ndarray
from .._atomic_write import AtomicFile

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file", "HookHandle", "shape_is_known"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``data`` cut into ``num_slice`` pieces along ``batch_axis`` (the first pieces one
    longer when it does not divide and ``even_split=False``)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"data with shape {data.shape} cannot be evenly split into "
                         f"{num_slice} slices along axis {batch_axis}. Use a batch size that's "
                         f"multiple of {num_slice} or set even_split=False to allow uneven "
                         f"partitioning of data.")
    if size < num_slice:
        raise ValueError(f"Too many slices for data with shape {data.shape}. Arguments are "
                         f"num_slice={num_slice} and batch_axis={batch_axis}.")
    if num_slice == 1:
        return [data]
    each, extra = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extra + [each] * (num_slice - extra)).tolist()
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` (an NDArray or array-like) split along ``batch_axis``, one piece on each
    context of ``ctx_list``."""
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    pieces = split_data(data, len(ctx_list), batch_axis, even_split)
    return [p.as_in_context(ctx) for p, ctx in zip(pieces, ctx_list)]


def _squared_norm(a):
    """The squared 2-norm of ``a`` (a sparse one from its stored values)."""
    if a.stype != "default":
        return ndarray.square(ndarray.norm(a))
    flat = a.reshape((-1,))
    return ndarray.dot(flat, flat)


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``; returns
    the norm before scaling (a float, or an NDArray without ``check_isfinite``)."""
    if not arrays:
        raise ValueError("clip_global_norm: arrays is empty; expected at least one NDArray")
    ctx = arrays[0].context
    squares = [_squared_norm(a).as_in_context(ctx) for a in arrays]
    total = ndarray.sqrt(ndarray.add_n(*squares))
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                  "undefined."), stacklevel=2)
    scale = max_norm / (total + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx), dim=0))
    for a in arrays:
        a *= scale.as_in_context(a.context)
    return total.asscalar() if check_isfinite else total


def check_sha1(filename, sha1_hash):
    """Whether the file's SHA-1 hex digest starts with ``sha1_hash`` (or is its prefix)."""
    digest = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    got = digest.hexdigest()
    n = min(len(got), len(sha1_hash))
    return got[:n] == sha1_hash[:n]


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """The local file for ``url``: ``path`` (a file, or a folder to put the URL's last part
    in; default the working folder). A file already there (with the right SHA-1 when
    given) is used as is; otherwise it is fetched (with ``requests`` where installed, as
    MXNet does, else urllib), and a failure names the URL and where to put the file by
    hand. The file appears whole or not at all, even with several processes at once."""
    base = url.split("/")[-1]
    if path is None:
        fname = base
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, base) if os.path.isdir(path) else path
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.")
    if os.path.exists(fname) and not overwrite and (sha1_hash is None
                                                    or check_sha1(fname, sha1_hash)):
        return fname
    if retries < 0:
        raise ValueError(f"download: retries must be >= 0, got {retries}")
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    for attempt in range(retries + 1):
        try:
            digest = hashlib.sha1()
            with AtomicFile(fname) as f:
                for chunk in _fetch(url, verify_ssl):
                    digest.update(chunk)
                    f.write(chunk)
                got = digest.hexdigest()
                if sha1_hash and got[:len(sha1_hash)] != sha1_hash[:len(got)]:
                    raise RuntimeError(f"{url} has SHA-1 {got}, expected {sha1_hash}")
            return fname
        except Exception as exc:
            if attempt == retries:
                raise RuntimeError(f"download: could not fetch {url} ({exc!r}); without "
                                   f"network, put the file at {os.path.abspath(fname)!r}"
                                   ) from exc


def _fetch(url, verify_ssl):
    """The bytes at ``url``, in chunks."""
    try:
        import requests
    except ImportError:
        requests = None
    if requests is not None:
        r = requests.get(url, stream=True, verify=verify_ssl)
        if r.status_code != 200:
            raise RuntimeError(f"Failed downloading url {url}: HTTP {r.status_code}")
        yield from r.iter_content(chunk_size=1 << 20)
        return
    import ssl
    import urllib.request
    context = None if verify_ssl else ssl._create_unverified_context()
    with urllib.request.urlopen(url, timeout=60, context=context) as src:
        yield from iter(lambda: src.read(1 << 20), b"")


def replace_file(src, dst):
    """Move ``src`` onto ``dst`` atomically (model_store writes downloads this way)."""
    os.replace(src, dst)


def _get_repo_url():
    """The Gluon file repository: ``MXNET_GLUON_REPO`` or MXNet's default, ending in '/'."""
    url = os.environ.get("MXNET_GLUON_REPO",
                         "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return url if url.endswith("/") else url + "/"


def _get_repo_file_url(namespace, filename):
    """The URL of a data set file in the Gluon repository."""
    return f"{_get_repo_url()}gluon/dataset/{namespace}/{filename}"


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (0 is unknown, or -1 in numpy-shape
    semantics)."""
    from .._runtime.base import is_np_shape
    if shape is None:
        return False
    unknown = -1 if is_np_shape() else 0
    if len(shape) == 0:
        return unknown == -1
    return all(d != unknown for d in shape)


class HookHandle:
    """What ``register_forward_hook`` returns: ``detach()`` (or leaving ``with``) removes the
    hook."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref is not None:
            raise ValueError("The same handle cannot be attached twice.")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref() if self._hooks_dict_ref else None, self._id)

    def __setstate__(self, state):
        hooks, self._id = state
        self._hooks_dict_ref = weakref.ref(hooks if hooks is not None else {})

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


def _indent(s_, num_spaces):
    """``s_`` with every line but the first indented by ``num_spaces``."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


def _brief_print_list(lst, limit=7):
    """``'a', 'b', ..., 'z'``: the names quoted, the middle left out past ``limit``."""
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., " +
                _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(f"'{i}'" for i in lst)
