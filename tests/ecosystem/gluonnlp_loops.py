"""GluonNLP 0.10 blocks whose ``hybrid_forward`` loops with ``F.contrib.foreach`` /
``while_loop`` / ``cond``, run imperatively and hybridized on mxnext.

``python -m mxnext run gluonnlp_loops.py OUT.npz`` writes, per block, the outputs (and for
ELMo and the BiLM encoder the parameter gradients of a fixed loss, taken in predict mode as
in ``gluonnlp_models.py``) of both runs, keys ``<block>.<plain|hybrid>.<what>``.
"""

import sys

import gluonnlp as nlp
import mxnet as mx
import numpy as np


def _flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _flat(o)]
    return [out]


def _with_grads(net, call):
    outs = _flat(call())
    with mx.autograd.record(train_mode=False):
        loss = mx.nd.add_n(*[(o * o).sum() * (1.0 / (k + 1))
                             for k, o in enumerate(_flat(call()))])
    loss.backward()
    res = {f"out{k}": o.asnumpy() for k, o in enumerate(outs)}
    res.update({f"grad:{k}": p.grad().asnumpy()
                for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"})
    return res


def elmo():
    """ELMoBiLM without a mask (with one, its hybrid_forward multiplies shapes
    (N, T, C) and (N, T, 1) elementwise, which MXNet 1.9.1 refuses as well)."""
    net = nlp.model.ELMoBiLM(rnn_type="lstmpc", output_size=16, filters=[[1, 4], [2, 8]],
                             char_embed_size=8, char_vocab_size=262, num_highway=1,
                             conv_layer_activation="relu", max_chars_per_token=6,
                             input_size=16, hidden_size=24, proj_size=16, num_layers=2,
                             cell_clip=3, proj_clip=3)
    chars = mx.nd.array(np.random.RandomState(8).randint(0, 262, (2, 5, 6)))
    return net, lambda: net(chars, net.begin_state(mx.nd.zeros, batch_size=2))


def bilm_encoder():
    net = nlp.model.BiLMEncoder(mode="lstmpc", num_layers=2, input_size=8, hidden_size=12,
                                proj_size=8, cell_clip=2, proj_clip=2)
    data = mx.nd.array(np.random.RandomState(9).normal(0, 1, (5, 3, 8)))
    return net, lambda: net(data, net.begin_state(mx.nd.zeros, batch_size=3))


class _Step(mx.gluon.HybridBlock):
    """A one-step decoder: token and state to log-probabilities and the new state."""

    def __init__(self, vocab_size=8, hidden=6):
        super().__init__()
        rs = np.random.RandomState(11)
        with self.name_scope():
            self.emb = self.params.get_constant("emb", rs.normal(0, 1, (vocab_size, hidden)))
            self.rec = self.params.get_constant("rec", rs.normal(0, .5, (hidden, hidden)))
            self.proj = self.params.get_constant("proj", rs.normal(0, 1.5, (hidden, vocab_size)))

    def hybrid_forward(self, F, inputs, states, emb, rec, proj):
        h = F.tanh(F.take(emb, inputs) + F.dot(states, rec))
        return F.log_softmax(F.dot(h, proj)), h


def beam_search():
    step = _Step()
    step.initialize()
    net = nlp.model.HybridBeamSearchSampler(2, 3, step, eos_id=1, max_length=7, vocab_size=8,
                                            scorer=nlp.model.BeamSearchScorer(alpha=.5, K=2.))
    init, states = mx.nd.array([2, 5]), mx.nd.array(np.linspace(-1, 1, 12).reshape(2, 6))
    return net, lambda: net(init, states)


BLOCKS = {"elmo": (elmo, True), "bilm_encoder": (bilm_encoder, True),
          "beam_search": (beam_search, False)}


def main(path):
    arrays = {}
    for name, (build, grads) in BLOCKS.items():
        for mode in ("plain", "hybrid"):
            mx.random.seed(7)
            net, call = build()
            if grads:
                net.initialize(mx.init.Normal(0.2))
            if mode == "hybrid":
                net.hybridize()
            res = _with_grads(net, call) if grads else \
                {f"out{k}": o.asnumpy() for k, o in enumerate(_flat(call()))}
            arrays.update({f"{name}.{mode}.{k}": v for k, v in res.items()})
    np.savez(path, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
