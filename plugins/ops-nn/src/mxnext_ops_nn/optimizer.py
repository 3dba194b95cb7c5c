"""Optimizer update ops (sgd, momentum, NAG, Adam, FTML, RMSProp, RMSPropAlex, FTRL,
signSGD, Signum and the multi-weight SGD variants), with MXNet 1.9's formulas.

The output is the new weight (MXNet's optimizers call them with ``out=weight``);
state inputs (``mom``, ``mean``, ``var``, ``d``, ``v``, ``n``, ``g``, ``delta``, ``z``) are
updated in place and declared through ``FMutateInputs``. Gradients are clipped
to ``[-clip_gradient, clip_gradient]`` when ``clip_gradient >= 0`` (ftml_update calls it
``clip_grad``; MXNet's kernels test ``>= 0``, so 0 clips everything to 0). They have no
gradient.

nag_mom_update's momentum uses the weight before the update; MXNet's kernel reads
the weight after writing the output, so called with ``out=weight`` (as its
optimizer does) its ``wd`` term sees the new weight.
"""

from __future__ import annotations

import numpy as np

from opsdk import (ElemwiseShape, ElemwiseType, Field, FloatOnly, Param, ParamError, assign,
                   register_op)

from ._infer import out_shapes

_LR = "Learning rate"
_WD = "Weight decay: coefficient of the L2 penalty on the weight."
_RESCALE = "Factor the incoming gradient is multiplied by first."
_CLIP = ("Bound on the gradient's magnitude, applied after rescaling; a negative value "
         "disables it (0 clips every gradient to 0, as MXNet's kernels do).")
_LAZY = "Update only the rows a row_sparse gradient holds (no effect on dense gradients)."
_MOM = "Share of the previous momentum kept at each step."


def _lr():
    return Field(description=_LR)


def _wd():
    return Field(0.0, description=_WD)


def _rescale():
    return Field(1.0, description=_RESCALE)


def _clip_gradient():
    return Field(-1.0, description=_CLIP)


def _lazy():
    return Field(True, description=_LAZY)


def _momentum():
    return Field(0.0, description=_MOM)


def _epsilon():
    return Field(1e-8, description="Small constant in the denominator that keeps it from "
                                   "vanishing.")


def _gamma1():
    return Field(0.95, description="Decay factor of the running mean of squared gradients.")


def _clip_weights():
    return Field(-1.0, description="Bound on the updated weight's magnitude; a negative value "
                                   "disables it.")


# Field order follows MXNet's (it is the order of positional arguments in mx.nd / mx.sym).
class SGDParam(Param):
    lr: float = _lr()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    lazy_update: bool = _lazy()


class SGDMomParam(Param):
    lr: float = _lr()
    momentum: float = _momentum()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    lazy_update: bool = _lazy()


class NAGMomParam(Param):
    lr: float = _lr()
    momentum: float = _momentum()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()


class AdamParam(Param):
    lr: float = _lr()
    beta1: float = Field(0.9, description="Decay factor of the running gradient mean.")
    beta2: float = Field(0.999, description="Decay factor of the running mean of squared "
                                            "gradients.")
    epsilon: float = _epsilon()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    lazy_update: bool = _lazy()


class FTMLParam(Param):
    lr: float = _lr()
    beta1: float = Field(0.6, ge=0, le=1, description="Decay factor of the running gradient "
                                                      "mean (around 0.5).")
    beta2: float = Field(0.999, ge=0, le=1, description="Decay factor of the running mean of "
                                                        "squared gradients (close to 1).")
    epsilon: float = _epsilon()
    t: int = Field(description="Number of the update (1 for the first); bias-corrects both "
                               "running means.")
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_grad: float = _clip_gradient()


class RMSPropParam(Param):
    lr: float = _lr()
    gamma1: float = _gamma1()
    epsilon: float = _epsilon()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    clip_weights: float = _clip_weights()


class RMSPropAlexParam(Param):
    lr: float = _lr()
    gamma1: float = _gamma1()
    gamma2: float = Field(0.9, description="Share of the previous step (delta) carried into "
                                           "the next.")
    epsilon: float = _epsilon()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    clip_weights: float = _clip_weights()


class FtrlParam(Param):
    lr: float = _lr()
    lamda1: float = Field(0.01, description="L1 penalty coefficient.")
    beta: float = Field(1.0, description="Offset in the per-coordinate step size "
                                         "lr / (beta + sqrt(n)).")
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()


class SignSGDParam(Param):
    lr: float = _lr()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()


class SignumParam(Param):
    lr: float = _lr()
    momentum: float = _momentum()
    wd: float = _wd()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    wd_lh: float = Field(0.0, description="Decoupled decay: the weight shrinks by a factor "
                                          "(1 - lr*wd_lh), outside the momentum.")


def _clip(xp, g, bound):
    return xp.clip(g, -bound, bound) if bound >= 0 else g


def _scaled(xp, p, g):
    """``clip(rescale_grad * grad)``: the gradient as the SGD-family kernels use it."""
    return _clip(xp, p.rescale_grad * g, p.clip_gradient)


def _with_wd(xp, p, w, g):
    """``clip(rescale_grad * grad + wd * weight)``: as Adam and RMSProp use it."""
    return _clip(xp, p.rescale_grad * g + p.wd * w, p.clip_gradient)


# Update rules: fn(xp, p, weight, grad, *states) -> new weight; states are written in place.
def _sgd(xp, p, w, g, out=None):
    """MXNet's kernel, in the weight's dtype: ``(1 - lr*wd) * w - (lr*rescale_grad) * g``
    without clipping (one scalar: two passes, straight into ``out`` when given)."""
    f = w.dtype.type
    lr = f(p.lr)
    if p.clip_gradient >= 0:
        step = lr * _clip(xp, f(p.rescale_grad) * g, f(p.clip_gradient))
    else:
        step = (lr * f(p.rescale_grad)) * g
    decay = f(1) - lr * f(p.wd)
    if decay != 1:
        w = decay * w
    return xp.subtract(w, step, out=step if out is None else out)


def _sgd_mom(xp, p, w, g, mom, out=None):
    if out is not None and _sgd_mom_blocks(w, g, mom, out, p.lr, p.wd, p):
        return
    mom[...] = p.momentum * mom - p.lr * p.wd * w - p.lr * _scaled(xp, p, g)
    new = w + mom
    if out is None:
        return new
    out[...] = new


_BLOCK = 1 << 16      # elements: the blocked update's temporaries stay in cache


def _sgd_mom_blocks(w, g, mom, out, lr, wd, p) -> bool:
    """``mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*g)`` (``0 - ...`` without
    ``mom``), ``out = w + mom``, block by block into ``out``: the very operations of the
    whole-array rule, in the same order, without its whole-array temporaries (a weight of 1M
    float32: 1.2 ms against 8 passes through memory and fresh pages). Whether it could (numpy
    arrays of one float dtype, one shape, C order; ``out`` is ``w`` or apart from them)."""
    if not _blockable(w, g, mom, out):
        return False
    w, g, out = w.reshape(-1), g.reshape(-1), out.reshape(-1)
    mom = None if mom is None else mom.reshape(-1)
    n = w.size
    t1, t2 = np.empty(min(n, _BLOCK), w.dtype), np.empty(min(n, _BLOCK), w.dtype)
    for i in range(0, n, _BLOCK):
        j = min(n, i + _BLOCK)
        _sgd_mom_block(w[i:j], g[i:j], None if mom is None else mom[i:j], out[i:j],
                       t1[:j - i], t2[:j - i], lr, wd, p)
    return True


def _blockable(w, g, mom, out) -> bool:
    """Whether the blocked update may run: numpy arrays of one float dtype, one shape, C
    order, the inputs apart, ``out`` either ``w`` or apart from them all."""
    arrays = (w, g, out) if mom is None else (w, g, mom, out)
    dt = w.dtype
    if not (type(w) is np.ndarray and dt in (np.float32, np.float64) and all(
            type(a) is np.ndarray and a.dtype == dt and a.shape == w.shape
            and a.flags.c_contiguous for a in arrays)):
        return False
    ins = arrays[:-1]
    if any(np.may_share_memory(a, b) for i, a in enumerate(ins) for b in ins[i + 1:]):
        return False
    return out.ctypes.data == w.ctypes.data or \
        not any(np.may_share_memory(out, a) for a in ins)


def _sgd_mom_block(w, g, mom, out, a, b, lr, wd, p):
    """One block of ``_sgd_mom_blocks``, with ``a`` and ``b`` its temporaries."""
    if mom is None:
        if wd == 0:         # 0 - lr*g' added to w is w - lr*g', bit for bit: three passes
            _step(g, b, lr, p)
            np.subtract(w, b, out=out)
            return
        np.multiply(w, -(lr * wd), out=a)       # exactly 0 - w*(lr*wd)
    else:
        np.multiply(mom, p.momentum, out=a)
        np.multiply(w, lr * wd, out=b)
        np.subtract(a, b, out=a)
    _step(g, b, lr, p)
    np.subtract(a, b, out=a if mom is None else mom)
    np.add(w, a if mom is None else mom, out=out)


def _step(g, b, lr, p):
    """``b = lr * clip(rescale_grad * g)``, in place in ``b``."""
    np.multiply(g, p.rescale_grad, out=b)
    if p.clip_gradient >= 0:
        np.clip(b, -p.clip_gradient, p.clip_gradient, out=b)
    np.multiply(b, lr, out=b)


def _nag_mom(xp, p, w, g, mom):
    step = p.lr * (_scaled(xp, p, g) + p.wd * w)
    decayed = p.momentum * mom
    new = w + p.momentum * decayed - (p.momentum + 1) * step
    mom[...] = decayed - step
    return new


def _adam(xp, p, w, g, mean, var):
    g = _with_wd(xp, p, w, g)
    mean[...] = p.beta1 * mean + (1 - p.beta1) * g
    var[...] = p.beta2 * var + (1 - p.beta2) * g * g
    return w - p.lr * mean / (xp.sqrt(var) + p.epsilon)


def _ftml(xp, p, w, g, d, v, z):
    """In the weight's dtype throughout, parameters included (as MXNet's kernel): 1 - beta2**t
    cancels, so a float64 beta2 would move d by many float32 ulps."""
    f = w.dtype.type
    beta1, beta2, t = f(p.beta1), f(p.beta2), f(p.t)
    g = _clip(xp, f(p.rescale_grad) * g + f(p.wd) * w, f(p.clip_grad))
    v[...] = beta2 * v + (1 - beta2) * g * g
    d_t = (1 - beta1 ** t) / f(p.lr) * (xp.sqrt(v / (1 - beta2 ** t)) + f(p.epsilon))
    z[...] = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
    d[...] = d_t
    return -z / d_t


def _rmsprop(xp, p, w, g, n):
    g = _with_wd(xp, p, w, g)
    n[...] = (1 - p.gamma1) * (g * g) + p.gamma1 * n
    return _clip(xp, w - p.lr * (g / xp.sqrt(n + p.epsilon)), p.clip_weights)


def _rmspropalex(xp, p, w, g, n, mean_g, delta):
    g = _with_wd(xp, p, w, g)
    n[...] = (1 - p.gamma1) * g * g + p.gamma1 * n
    mean_g[...] = (1 - p.gamma1) * g + p.gamma1 * mean_g
    delta[...] = p.gamma2 * delta - p.lr * g / xp.sqrt(n - mean_g * mean_g + p.epsilon)
    return _clip(xp, w + delta, p.clip_weights)


def _ftrl(xp, p, w, g, z, n):
    g = _scaled(xp, p, g)
    z += g - (xp.sqrt(n + g * g) - xp.sqrt(n)) * w / p.lr
    n += g * g
    return ((xp.sign(z) * p.lamda1 - z) / ((p.beta + xp.sqrt(n)) / p.lr + p.wd)
            * (xp.abs(z) > p.lamda1))


def _signsgd(xp, p, w, g):          # clip_gradient has no effect here (as in MXNet)
    return (1 - p.lr * p.wd) * w - p.lr * xp.sign(g)


def _signum(xp, p, w, g, mom):
    mom[...] = p.momentum * mom - (1 - p.momentum) * (p.wd * w + _scaled(xp, p, g))
    return (1 - p.lr * p.wd_lh) * w + p.lr * xp.sign(mom)


def _compute(rule, writes_out=False):
    """``writes_out``: the rule takes ``out=`` and writes the new weight there itself."""
    def compute(ctx, inputs, req, outputs, params):
        w, g, *states = inputs
        out = outputs[0]
        if writes_out and req[0] in (1, 2) and out.dtype == w.dtype:
            rule(ctx.xp, params, w, g, *states, out=out)
            return
        new = rule(ctx.xp, params, w, g, *states)     # states first: out may alias the weight
        assign(out, req[0], new.astype(out.dtype, copy=False))
    compute.__name__ = f"{rule.__name__.lstrip('_')}_update"
    return compute


def _register(name, param, rule, states, doc, state_domain=(-1, 1), params=None,
              writes_out=False):
    """``params``: required parameters besides lr, for the conformance examples."""
    names, params = ["weight", "grad", *states], params or {}
    clip = "clip_grad" if "clip_grad" in param.model_fields else "clip_gradient"
    n = len(names)
    b = (register_op(name).describe(doc).set_attr_parser(param)
         .set_num_inputs(n).set_num_outputs(1)
         .set_attr("FInferShape", ElemwiseShape(n, 1, name))
         .set_attr("FInferType", FloatOnly(ElemwiseType(n, 1, name)))
         .set_attr("FCompute<cpu>", _compute(rule, writes_out))
         .set_attr("TExamples", [
             {"inputs": [(3, 4)] * n, "domain": [(-1, 1), (-1, 1)] + [state_domain] * len(states),
              "params": {"lr": 0.1, "wd": 0.01, "rescale_grad": 0.5, **params}},
             {"inputs": [(5,)] * n, "dtype": "float64",
              "domain": [(-1, 1), (-3, 3)] + [state_domain] * len(states),
              "params": {"lr": "0.05", clip: "0.4", **params}}]))
    for a in names:
        b.add_argument(a, "NDArray-or-Symbol", a.capitalize())
    if states:
        b.set_attr("FMutateInputs", lambda p: list(range(2, n)))


_register("sgd_update", SGDParam, _sgd, [],
          "SGD step: ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``.",
          writes_out=True)
_register("sgd_mom_update", SGDMomParam, _sgd_mom, ["mom"],
          "SGD with momentum: ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``, "
          "``weight += mom``.", writes_out=True)
_register("nag_mom_update", NAGMomParam, _nag_mom, ["mom"],
          "Nesterov momentum: with ``step = lr * (clip(rescale_grad*grad) + wd*weight)``, "
          "``weight += momentum**2 * mom - (1 + momentum) * step``, "
          "``mom = momentum*mom - step``.")
_register("adam_update", AdamParam, _adam, ["mean", "var"],
          "Adam step (no bias correction; the optimizer folds it into lr): with "
          "``g = clip(rescale_grad*grad + wd*weight)``, ``mean = beta1*mean + (1-beta1)*g``, "
          "``var = beta2*var + (1-beta2)*g**2``, "
          "``weight -= lr * mean / (sqrt(var) + epsilon)``.")
_register("ftml_update", FTMLParam, _ftml, ["d", "v", "z"],
          "FTML (Follow the Moving Leader, Zheng & Kwok 2017): with "
          "``g = clip(rescale_grad*grad + wd*weight)``, ``v = beta2*v + (1-beta2)*g**2``, "
          "``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)``, "
          "``z = beta1*z + (1-beta1)*g - (d_t - beta1*d) * weight``, ``d = d_t``, "
          "``weight = -z / d_t``.", state_domain=(0, 1), params={"t": 3})
_register("rmsprop_update", RMSPropParam, _rmsprop, ["n"],
          "RMSProp (Tieleman & Hinton): ``n = (1-gamma1)*g**2 + gamma1*n``, "
          "``weight -= lr * g / sqrt(n + epsilon)`` (then clipped to clip_weights if >= 0), "
          "``g = clip(rescale_grad*grad + wd*weight)``.", state_domain=(0, 1))
_register("rmspropalex_update", RMSPropAlexParam, _rmspropalex, ["n", "g", "delta"],
          "Centered RMSProp (Graves 2013): ``n = (1-gamma1)*g**2 + gamma1*n``, "
          "``g_avg = (1-gamma1)*g + gamma1*g_avg``, "
          "``delta = gamma2*delta - lr*g / sqrt(n - g_avg**2 + epsilon)``, ``weight += delta``.",
          state_domain=(0.3, 0.5))
_register("ftrl_update", FtrlParam, _ftrl, ["z", "n"],
          "FTRL-Proximal: ``z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr``, "
          "``n += g**2``, ``weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)`` where "
          "``|z| > lamda1``, else 0.", state_domain=(0, 1))
_register("signsgd_update", SignSGDParam, _signsgd, [],
          "signSGD: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``.")
_register("signum_update", SignumParam, _signum, ["mom"],
          "Signum: ``mom = momentum*mom - (1-momentum) * (wd*weight + clip(rescale_grad*grad))``, "
          "``weight = (1 - lr*wd_lh) * weight + lr * sign(mom)``.")


# -- multi-weight SGD ---------------------------------------------------------------------------
class MultiSGDParam(Param):
    lrs: tuple[float, ...] = Field(description="Learning rate of each weight.")
    wds: tuple[float, ...] = Field(description="L2 penalty coefficient of each weight.")
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    num_weights: int = Field(1, description="How many weights one call updates.")


class MultiSGDMomParam(Param):
    lrs: tuple[float, ...] = Field(description="Learning rate of each weight.")
    wds: tuple[float, ...] = Field(description="L2 penalty coefficient of each weight.")
    momentum: float = _momentum()
    rescale_grad: float = _rescale()
    clip_gradient: float = _clip_gradient()
    num_weights: int = Field(1, description="How many weights one call updates.")


def multi_weight_rules(name, stride, fields):
    """``(check, infer_shape)`` of an op updating ``num_weights`` weights, each from a group of
    ``stride`` same-shape inputs into one output (inputs after the groups are left alone):
    ``check`` wants each parameter of ``fields`` to hold one value per weight."""
    def check(p):
        for field in fields:
            if len(getattr(p, field)) != p.num_weights:
                raise ParamError(f"Operator {name!r}: {field} has {len(getattr(p, field))} "
                                 f"value(s), expected num_weights={p.num_weights}")

    def infer_shape(p, ins, outs):
        check(p)
        ins, new = list(ins), []
        for i in range(p.num_weights):
            group = slice(i * stride, (i + 1) * stride)
            gi, go = ElemwiseShape(stride, 1, name)(p, ins[group], [outs[i]])
            ins[group] = gi
            new.append(go[0])
        if any(s is None for s in new):
            return ins, [o if o is None else tuple(o) for o in new]
        return ins, out_shapes(name, outs, new)
    return check, infer_shape


def _multi_register(name, param, stride, doc):
    kinds = ["weight", "grad", "mom"][:stride]

    def names(p):
        return [f"{k}_{i}" for i in range(p.num_weights) for k in kinds]

    _, infer_shape = multi_weight_rules(name, stride, ("lrs", "wds"))

    def compute(ctx, inputs, req, outputs, params):
        xp = ctx.xp
        for i in range(params.num_weights):
            w, g, *mom = inputs[i * stride:(i + 1) * stride]
            if not req[i] and not mom:
                continue                # nothing to write, no state to update
            lr, wd = params.lrs[i], params.wds[i]
            if req[i] in (1, 2) and _sgd_mom_blocks(w, g, mom[0] if mom else None,
                                                    outputs[i], lr, wd, params):
                continue
            step = params.momentum * mom[0] if mom else 0
            step = step - lr * wd * w - lr * _scaled(xp, params, g)
            if mom:
                mom[0][...] = step
            assign(outputs[i], req[i], (w + step).astype(outputs[i].dtype, copy=False))

    examples = [{"inputs": [(3, 4)] * stride + [(5,)] * stride,
                 "params": {"num_weights": 2, "lrs": "(0.1, 0.2)", "wds": (0.0, 0.01),
                            "rescale_grad": 0.5, "clip_gradient": 0.3}},
                {"inputs": [(2, 2)] * stride, "params": {"lrs": "0.5", "wds": "(0.1,)"}}]
    if stride == 3:
        for e in examples:
            e["params"]["momentum"] = 0.9
    b = (register_op(name).describe(doc).set_attr_parser(param)
         .set_num_inputs(lambda p: stride * p.num_weights)
         .set_num_outputs(lambda p: p.num_weights)
         .set_attr("FListInputNames", names)
         .set_attr("FInferShape", infer_shape)
         .set_attr("FInferType", FloatOnly(ElemwiseType(-1, -1, name)))
         .set_attr("FCompute<cpu>", compute)
         .set_attr("TExamples", examples)
         .add_argument("data", "NDArray-or-Symbol[]", "Per weight, in turn: weight, grad"
                       + (", mom" if stride == 3 else "")))
    if stride == 3:
        b.set_attr("FMutateInputs", lambda p: [3 * i + 2 for i in range(p.num_weights)])


_multi_register("multi_sgd_update", MultiSGDParam, 2,
                "sgd_update over ``num_weights`` (weight_i, grad_i) pairs with per-weight "
                "``lrs`` and ``wds``; output i is the new weight i.")
_multi_register("multi_sgd_mom_update", MultiSGDMomParam, 3,
                "sgd_mom_update over ``num_weights`` (weight_i, grad_i, mom_i) triples with "
                "per-weight ``lrs`` and ``wds``; the moms are updated in place.")


# -- reset_arrays: gluon's zero_grad ----------------------------------------------------------
class ResetArraysParam(Param):
    num_arrays: int = Field(ge=1, description="How many arrays to set to zero.")


def _reset_arrays(ctx, inputs, req, outputs, params):
    for a in inputs:
        a[...] = 0


(register_op("reset_arrays")
 .describe("Sets every input to zero in place (MXNet's gluon ``zero_grad``); no outputs.")
 .set_attr_parser(ResetArraysParam)
 .set_num_inputs(lambda p: p.num_arrays).set_num_outputs(0)
 .set_attr("FInferShape", lambda p, ins, outs: (list(ins), []))
 .set_attr("FInferType", lambda p, ins, outs: (list(ins), []))
 .set_attr("FMutateInputs", lambda p: list(range(p.num_arrays)))
 .set_attr("FCompute<cpu>", _reset_arrays)
 .add_argument("data", "NDArray-or-Symbol[]", "The arrays to reset"))
