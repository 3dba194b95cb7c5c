"""Small GluonNLP models, written for MXNet: run by MXNet 1.9.1 to write the fixtures
(``fixtures/make_gluonnlp_fixtures.py``) and by mxnext through ``python -m mxnext run`` to
check them (``test_gluonnlp_models.py``).

``python gluonnlp_models.py make FOLDER``: per model, parameters initialised from a fixed
seed (``gluonnlp_<name>.params``, MXNet's format) and one ``gluonnlp_<name>.npz`` with the
inputs, the outputs in predict mode and the gradient of ``_loss`` for every parameter.
``python gluonnlp_models.py check FOLDER OUT``: loads those parameters and inputs and writes
its own outputs and gradients to the folder ``OUT`` under the same names.
"""

import sys
from pathlib import Path

import mxnet as mx
import numpy as np

import gluonnlp as nlp


def _tokens(shape, high, seed):
    return np.random.RandomState(seed).randint(0, high, shape).astype("float32")


def bert():
    encoder = nlp.model.BERTEncoder(num_layers=2, units=32, hidden_size=64, max_length=16,
                                    num_heads=4, dropout=0.1)
    net = nlp.model.BERTModel(encoder, vocab_size=30, token_type_vocab_size=2, units=32,
                              embed_size=32, use_pooler=True, use_decoder=True,
                              use_classifier=True)
    types = np.zeros((2, 8), "float32")
    types[:, 5:] = 1
    inputs = [_tokens((2, 8), 30, 1), types, np.array([8, 6], "float32"),
              np.array([[1, 3], [0, 5]], "float32")]
    return net, inputs, True


def roberta():
    encoder = nlp.model.BERTEncoder(num_layers=1, units=16, hidden_size=32, max_length=12,
                                    num_heads=2, dropout=0.1)
    net = nlp.model.RoBERTaModel(encoder, vocab_size=25, units=16, embed_size=16)
    inputs = [_tokens((3, 6), 25, 2), np.array([6, 2, 4], "float32"),
              np.array([[0, 4], [1, 1], [3, 2]], "float32")]
    return net, inputs, True


def awd_lstm():
    net = nlp.model.AWDRNN("lstm", vocab_size=20, embed_size=12, hidden_size=16, num_layers=2,
                           tie_weights=True, dropout=0.2, weight_drop=0.3, drop_h=0.2,
                           drop_i=0.2, drop_e=0.1)
    return net, [_tokens((7, 3), 20, 3)], True


def standard_lstm():
    net = nlp.model.StandardRNN("lstm", vocab_size=20, embed_size=16, hidden_size=16,
                                num_layers=2, dropout=0.2, tie_weights=True)
    return net, [_tokens((6, 2), 20, 4)], False       # its hybrid_forward calls nd.Dropout


def big_rnn():
    net = nlp.model.BigRNN(vocab_size=20, embed_size=12, hidden_size=24, num_layers=1,
                           projection_size=12, embed_dropout=0.1, encode_dropout=0.1)
    states = [np.zeros((2, 12), "float32"), np.zeros((2, 24), "float32")]
    return net, [_tokens((5, 2), 20, 5), states], False


def transformer():
    vocab = nlp.Vocab(nlp.data.count_tokens(list("abcdefghijklmnop")))
    enc, dec, one_step = nlp.model.transformer.get_transformer_encoder_decoder(
        num_layers=2, units=32, hidden_size=64, num_heads=4, max_src_length=16,
        max_tgt_length=16, dropout=0.1)
    net = nlp.model.translation.NMTModel(src_vocab=vocab, tgt_vocab=vocab, encoder=enc,
                                         decoder=dec, one_step_ahead_decoder=one_step,
                                         embed_size=32, prefix="transformer_")
    inputs = [_tokens((2, 7), len(vocab), 6), _tokens((2, 6), len(vocab), 7),
              np.array([7, 4], "float32"), np.array([6, 3], "float32")]
    return net, inputs, True


class _ELMoFromZeros(mx.gluon.Block):
    """ELMoBiLM from zero begin states (which it takes as an argument)."""

    def __init__(self, bilm):
        super().__init__()
        self.bilm = bilm

    def forward(self, chars, mask):
        states = self.bilm.begin_state(mx.nd.zeros, batch_size=chars.shape[0])
        return self.bilm(chars, states, mask)[0]


def elmo():
    bilm = nlp.model.ELMoBiLM(rnn_type="lstmpc", output_size=16, filters=[[1, 4], [2, 8]],
                              char_embed_size=8, char_vocab_size=262, num_highway=1,
                              conv_layer_activation="relu", max_chars_per_token=6,
                              input_size=16, hidden_size=24, proj_size=16, num_layers=2,
                              cell_clip=3, proj_clip=3)
    mask = np.ones((2, 5), "float32")
    mask[1, 3:] = 0
    return _ELMoFromZeros(bilm), [_tokens((2, 5, 6), 262, 8), mask], False  # masked: no symbol


MODELS = {"bert": bert, "roberta": roberta, "awd_lstm": awd_lstm,
          "standard_lstm": standard_lstm, "big_rnn": big_rnn, "transformer": transformer,
          "elmo": elmo}


def _nd(x):
    return [_nd(v) for v in x] if isinstance(x, list) else mx.nd.array(x, dtype=x.dtype)


def _flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _flat(o)]
    return [] if out is None else [out]


def _loss(outs):
    """A fixed weighting of every output, so each one reaches the gradient."""
    return mx.nd.add_n(*[(o * o).sum() * (1.0 / (k + 1)) for k, o in enumerate(outs)])


def run(net, inputs):
    """Outputs in predict mode, then the gradients of ``_loss`` (also in predict mode)."""
    args = [_nd(x) for x in inputs]
    outs = _flat(net(*args))
    with mx.autograd.record(train_mode=False):
        loss = _loss(_flat(net(*args)))
    loss.backward()
    grads = {k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items()
             if p.grad_req != "null"}
    return [o.asnumpy() for o in outs], grads


def _arrays(inputs, outs, grads):
    arrays = {f"out{k}": o for k, o in enumerate(outs)}
    arrays.update({f"grad:{k}": g for k, g in grads.items()})
    for k, x in enumerate(inputs):
        for j, v in enumerate(x if isinstance(x, list) else [x]):
            arrays[f"in{k}.{j}"] = v
    return arrays


def make(folder):
    for name, build in MODELS.items():
        mx.random.seed(7)
        net, inputs, hybrid = build()
        net.initialize(mx.init.Normal(0.2))
        if hybrid:
            net.hybridize()
        outs, grads = run(net, inputs)
        net.save_parameters(str(folder / f"gluonnlp_{name}.params"))
        np.savez_compressed(folder / f"gluonnlp_{name}.npz", **_arrays(inputs, outs, grads))


def check(folder, out_folder):
    for name, build in MODELS.items():
        net, inputs, hybrid = build()
        net.load_parameters(str(folder / f"gluonnlp_{name}.params"))
        if hybrid:
            net.hybridize()
        saved = np.load(folder / f"gluonnlp_{name}.npz")
        inputs = [[saved[f"in{k}.{j}"] for j in range(len(x))] if isinstance(x, list)
                  else saved[f"in{k}.0"] for k, x in enumerate(inputs)]
        outs, grads = run(net, inputs)
        np.savez(out_folder / f"gluonnlp_{name}.npz", **_arrays(inputs, outs, grads))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(Path(sys.argv[2]))
    else:
        check(Path(sys.argv[2]), Path(sys.argv[3]))
