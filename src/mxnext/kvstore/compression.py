"""MXNet's 2-bit gradient compression (``set_gradient_compression({'type': '2bit',
'threshold': t})``), on numpy arrays.

Each value of a gradient is added to a residual kept by the sender; a residual at or above
``t`` sends ``+t`` and keeps ``residual - t``, one at or below ``-t`` sends ``-t`` and keeps
``residual + t``, anything else sends 0 and stays. The three states take 2 bits: 16 values
pack into one float32 word, in MXNet's layout (byte ``j`` of a word holds values ``4j`` to
``4j+3``, the first in the top two bits; ``11`` is ``+t``, ``10`` is ``-t``), so the packed
arrays are the ones MXNet 1.9 sends.
"""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError

__all__ = ["GradientCompression"]


class GradientCompression:
    """Parsed ``compression_params`` with the quantize and dequantize steps."""

    VALUES_PER_WORD = 16

    def __init__(self, params):
        if not isinstance(params, dict):
            raise MXNetError(f"set_gradient_compression: compression_params must be a dict "
                             f"such as {{'type': '2bit', 'threshold': 0.5}}, got "
                             f"{type(params).__name__}")
        if "type" not in params:
            raise MXNetError("set_gradient_compression: compression_params needs 'type' "
                             "('2bit')")
        self.type = str(params["type"])
        if self.type != "2bit":
            raise MXNetError(f"set_gradient_compression: unknown compression type "
                             f"{self.type!r}; MXNet 1.9 has '2bit'")
        try:
            self.threshold = float(params.get("threshold", 0.5))
        except (TypeError, ValueError):
            raise MXNetError(f"set_gradient_compression: threshold must be a number, got "
                             f"{params.get('threshold')!r}") from None
        if not self.threshold > 0:
            raise MXNetError(f"set_gradient_compression: threshold must be greater than 0, "
                             f"got {self.threshold}")

    def __repr__(self):
        return f"GradientCompression(type={self.type!r}, threshold={self.threshold})"

    @classmethod
    def compressed_size(cls, size: int) -> int:
        """How many float32 words hold ``size`` quantized values."""
        return -(-size // cls.VALUES_PER_WORD)

    def check_dtype(self, what, key, dtype) -> None:
        if np.dtype(dtype) != np.float32:
            raise MXNetError(f"{what}: key {key!r}: gradient compression works on float32 "
                             f"values only, got {np.dtype(dtype).name}")

    def quantize(self, grad, residual, out) -> None:
        """Add ``grad`` to ``residual`` and write the 2-bit codes into ``out`` (float32,
        ``compressed_size(grad.size)`` words); ``residual`` keeps what was not sent."""
        t = np.float32(self.threshold)
        r = residual.reshape(-1)
        r += grad.reshape(-1)
        pos = r >= t
        neg = r <= -t
        r[pos] -= t
        r[neg] += t
        bits = np.empty((r.size, 2), np.bool_)
        np.logical_or(pos, neg, out=bits[:, 0])
        bits[:, 1] = pos
        packed = np.packbits(bits.reshape(-1))
        words = out.reshape(-1).view(np.uint8)
        words[:packed.size] = packed
        words[packed.size:] = 0

    def dequantize(self, packed, out, add=False) -> None:
        """Write (``add``: add) the values the codes in ``packed`` stand for into ``out``."""
        n = out.size
        bits = np.unpackbits(packed.reshape(-1).view(np.uint8), count=2 * n).reshape(n, 2)
        sign = bits[:, 1].astype(np.float32) * 2 - 1          # 1 for 11, -1 for 10
        vals = (bits[:, 0] * sign * np.float32(self.threshold)).reshape(out.shape)
        if add:
            out += vals
        else:
            out[...] = vals
