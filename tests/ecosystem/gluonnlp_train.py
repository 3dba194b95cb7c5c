"""A few iterations of GluonNLP training on synthetic data, written for MXNet, with GluonNLP's
own components: an AWD-LSTM language model on BPTT batches with the activation
regularisation losses, gradient clipping and detached states (as
``scripts/language_model/word_language_model.py``), and a small BERT with masked-LM and
next-sentence losses under the BERTAdam optimizer (as ``scripts/bert/run_pretraining.py``).

``python gluonnlp_train.py OUT.json`` writes each model's loss per iteration;
``test_gluonnlp_training.py`` runs it through ``python -m mxnext run``.
"""

import json
import random
import sys

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

import gluonnlp as nlp

NOUNS = "cat dog bird fish king queen city river".split()
VERBS = "sees likes eats finds takes".split()


def _sentences(n, seed):
    """Sentences whose subject (drawn at random) fixes the rest: a model can learn them."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        k = r.randrange(len(NOUNS))
        out.append(["the", NOUNS[k], VERBS[k % len(VERBS)], "a", NOUNS[(3 * k + 1) % 8], "."])
    return out


def language_model(steps=90, bptt=8, batch_size=4):
    corpus = [t for s in _sentences(120, 0) for t in s + ["<eos>"]]
    vocab = nlp.Vocab(nlp.data.Counter(corpus), padding_token=None, bos_token=None)
    batches = nlp.data.batchify.CorpusBPTTBatchify(vocab, bptt, batch_size,
                                                   last_batch="discard")(corpus)
    model = nlp.model.train.AWDRNN("lstm", len(vocab), 16, 16, 2, True, 0.1, 0.2, 0.1, 0.1,
                                   0.05)
    model.initialize(mx.init.Xavier())
    model.hybridize(static_alloc=True)
    trainer = gluon.Trainer(model.collect_params(), "sgd",
                            {"learning_rate": 20.0, "momentum": 0, "wd": 1e-6},
                            update_on_kvstore=False)
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    ar = nlp.loss.ActivationRegularizationLoss(2.0)
    tar = nlp.loss.TemporalActivationRegularizationLoss(1.0)
    hidden = model.begin_state(batch_size, func=mx.nd.zeros)
    losses = []
    for step in range(steps):
        data, target = batches[step % len(batches)]
        hidden = [[h.detach() for h in layer] for layer in hidden]
        with autograd.record():
            out, hidden, states, dropped = model(data, hidden)
            plain = ce(out.reshape(-3, -1), target.reshape(-1))
            loss = plain + ar(*dropped[-1:]) + tar(*states[-1:])
            loss = loss.sum() / data.size
        loss.backward()
        grads = [p.grad() for p in model.collect_params().values() if p.grad_req != "null"]
        gluon.utils.clip_global_norm(grads, 0.25)
        trainer.step(1)
        losses.append(float(plain.mean().asscalar()))
    return losses


def bert(steps=25, batch_size=8, length=12):
    vocab_size, rs = 40, np.random.RandomState(0)
    encoder = nlp.model.BERTEncoder(num_layers=2, units=32, hidden_size=64, max_length=16,
                                    num_heads=4, dropout=0.1)
    model = nlp.model.BERTModel(encoder, vocab_size=vocab_size, token_type_vocab_size=2,
                                units=32, embed_size=32, use_pooler=True, use_decoder=True,
                                use_classifier=True)
    model.initialize(mx.init.Normal(0.02))
    model.hybridize(static_alloc=True)
    # a learnable pattern: the second segment repeats the first when the label is 1
    first = rs.randint(5, vocab_size, (batch_size, length // 2))
    labels = rs.randint(0, 2, batch_size)
    second = np.where(labels[:, None] == 1, first, rs.randint(5, vocab_size, first.shape))
    tokens = np.concatenate([first, second], axis=1)
    positions = np.stack([rs.choice(np.arange(1, length), 2, replace=False)
                          for _ in range(batch_size)])
    masked_ids = np.take_along_axis(tokens, positions, axis=1)
    inputs = tokens.copy()
    np.put_along_axis(inputs, positions, 4, axis=1)                  # 4: the mask token
    types = np.repeat([[0] * (length // 2) + [1] * (length // 2)], batch_size, axis=0)
    batch = [mx.nd.array(a) for a in (inputs, types, [length] * batch_size, positions)]
    trainer = gluon.Trainer(model.collect_params(), "bertadam",
                            {"learning_rate": 5e-3, "wd": 0.01})
    mlm, nsp = gluon.loss.SoftmaxCELoss(), gluon.loss.SoftmaxCELoss()
    losses = []
    for _ in range(steps):
        with autograd.record():
            _, _, cls, decoded = model(*batch)
            loss = mlm(decoded.reshape(-3, -1), mx.nd.array(masked_ids).reshape(-1)).mean() \
                + nsp(cls, mx.nd.array(labels)).mean()
        loss.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    return losses


if __name__ == "__main__":
    mx.random.seed(3)
    with open(sys.argv[1], "w") as f:
        json.dump({"lm": language_model(), "bert": bert()}, f)
