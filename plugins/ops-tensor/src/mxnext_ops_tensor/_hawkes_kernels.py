"""The sweeps behind _contrib_hawkesll: the log-likelihood of marked Hawkes processes with
exponential kernels (forward, event by event as MXNet's kernel) and its gradient (one
reverse sweep over the recorded events). Written against ``xp``; each step handles every
sequence of the batch at once (rows ``r``, their marks ``c``).

Per sequence: ``t`` the time of the event, ``d`` the time since the previous event of its
mark (or since 0), ``e = exp(-beta d)``, ``s`` the mark's state before it, intensity
``lam = lda + alpha beta s e``, compensator ``lda d + alpha s (1 - e)``; the state becomes
``1 + s e``. After the last event each mark's compensator runs on to ``max_time``, and the
state decays to it (``out_state``).
"""

from __future__ import annotations

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _exp(xp, x):
    """MXNet's ``expf`` (C, float32, correctly rounded), cast back to the data's dtype; float64
    data keeps float64 (MXNet's float32 there is a truncation, see docs)."""
    if x.dtype == _F64:
        return xp.exp(x)
    return xp.exp(x.astype(_F32).astype(_F64)).astype(_F32).astype(x.dtype)


def _log(xp, x):
    """MXNet's ``logf``: a float32 result (it then adds to the float16 sum in float32)."""
    if x.dtype == _F64:
        return xp.log(x)
    return xp.log(x.astype(_F32).astype(_F64)).astype(_F32)


def forward(xp, lda, alpha, beta, state, lags, marks, steps, max_time):
    """(loglik (N,), out_state (N, K), trace): ``steps[i]`` events of row i are read; the
    trace (per step: rows, marks, d, e, state before, lam; then the final state, the time
    left per mark and its decay) is what ``backward`` replays."""
    dt = lda.dtype
    n = lda.shape[0]
    ll, t = xp.zeros(n, dt), xp.zeros(n, dt)
    last = xp.zeros(lda.shape, dt)
    s = state.astype(dt, copy=True)
    events = []
    for j in range(int(steps.max()) if n else 0):
        r = xp.nonzero(steps > j)[0]
        c = marks[r, j]
        t[r] = t[r] + lags[r, j]
        tr = t[r]
        d = tr - last[r, c]
        a, b, mu, sp = alpha[c], beta[c], lda[r, c], s[r, c]
        e = _exp(xp, -b * d)
        lam = mu + a * b * sp * e
        comp = mu * d + a * sp * (1 - e)
        ll[r] = ll[r] + (_log(xp, lam) - comp)
        s[r, c] = 1 + sp * e
        last[r, c] = tr
        events.append((r, c, d, e, sp, lam))
    left = max_time[:, None] - last
    decay = _exp(xp, -beta * left)
    ll = ll - (lda * left + alpha * s * (1 - decay)).sum(axis=1)
    return ll, decay * s, (events, s, left, decay)


def backward(xp, og, og_state, lda, alpha, beta, state, lags, marks, steps, max_time):
    """Gradients (lda, alpha, beta, state, lags, max_time) of ``sum(og * loglik + og_state *
    out_state)``: the trace replayed backwards, carrying per row and mark the adjoints of
    the state and of the last event's time, and per row that of the running time."""
    events, s, left, decay = forward(xp, lda, alpha, beta, state, lags, marks, steps,
                                     max_time)[2]
    g = og[:, None]
    g_lda = -g * left
    g_alpha = -g * s * (1 - decay)
    g_beta = -(g * alpha + og_state) * s * left * decay
    s_bar = og_state * decay - g * alpha * (1 - decay)
    d_bar = -g * (lda + alpha * beta * s * decay) - og_state * beta * decay * s
    g_max_time = d_bar.sum(axis=1)
    last_bar, t_bar = -d_bar, xp.zeros_like(og)
    g_lags = xp.zeros(lags.shape, lda.dtype)
    for j in range(len(events) - 1, -1, -1):
        r, c, d, e, sp, lam = events[j]
        gr, a, b, sb = og[r], alpha[c], beta[c], s_bar[r, c]
        g_lda[r, c] += gr * (1 / lam - d)
        g_alpha[r, c] += gr * (b * sp * e / lam - sp * (1 - e))
        g_beta[r, c] += gr * a * sp * e * ((1 - b * d) / lam - d) - sb * sp * d * e
        dd = -gr * (a * b * sp * e * (b / lam + 1) + lda[r, c]) - sb * b * sp * e
        s_bar[r, c] = gr * a * (b * e / lam - (1 - e)) + sb * e
        tj = t_bar[r] + last_bar[r, c] + dd
        last_bar[r, c] = -dd
        g_lags[r, j] = tj
        t_bar[r] = tj
    return g_lda, g_alpha.sum(axis=0), g_beta.sum(axis=0), s_bar, g_lags, g_max_time
