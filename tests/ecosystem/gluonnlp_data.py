"""GluonNLP's data side as its scripts use it, written for MXNet: vocabularies, the BERT
tokenizer and sentence transform, batchify functions, its multi-process loader, bucket
samplers, BPTT batching, the beam search sampler and token embeddings read from a local file.

``python gluonnlp_data.py OUT.json`` writes every result as a list of numbers or strings
under a name; MXNet 1.9.1 wrote ``fixtures/gluonnlp_data.json`` (by
``fixtures/make_gluonnlp_fixtures.py``) and ``test_gluonnlp_data.py`` runs this through
``python -m mxnext run`` and compares.
"""

import json
import random
import sys
import tempfile
from pathlib import Path

import mxnet as mx
import numpy as np

import gluonnlp as nlp

TEXT = ["the cat sat on the mat", "the dog ate my homework", "a cat and a dog",
        "unaffable cats run", "the end"]


def _list(x):
    if isinstance(x, mx.nd.NDArray):
        x = x.asnumpy()
    return np.asarray(x).ravel().tolist()


def vocab(out):
    counter = nlp.data.count_tokens(" ".join(TEXT).split())
    v = nlp.Vocab(counter, max_size=10, min_freq=1, reserved_tokens=["<cls>"])
    out["vocab.tokens"] = v.idx_to_token
    out["vocab.indices"] = v[["the", "cat", "zebra", "<cls>"]]
    out["vocab.back"] = v.to_tokens([4, 5, 0])
    return v


def bert_tokenizer(out, folder):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "un", "##aff",
             "##able", "cats", "run", ",", "!", "hello", "world", "##s"]
    path = folder / "vocab.json"
    counter = nlp.data.Counter({w: len(words) - i for i, w in enumerate(words)})
    path.write_text(nlp.vocab.BERTVocab(counter).to_json())
    v = nlp.vocab.BERTVocab.from_json(path.read_text())
    tok = nlp.data.BERTTokenizer(v, lower=True)
    out["bert.tokens"] = tok("Hello, unaffable Cats! the worlds Zebra")
    transform = nlp.data.BERTSentenceTransform(tok, max_seq_length=12, pair=True)
    ids, length, types = transform(("the cat run", "hello unaffable world"))
    out["bert.ids"], out["bert.length"], out["bert.types"] = _list(ids), _list(length), \
        _list(types)


def batchify(out):
    samples = [([1, 2, 3], 0.5), ([4], 1.5), ([5, 6], 2.5)]
    fn = nlp.data.batchify.Tuple(nlp.data.batchify.Pad(axis=0, pad_val=-1, ret_length=True),
                                 nlp.data.batchify.Stack("float32"))
    (padded, lengths), labels = fn(samples)
    out["batchify.padded"], out["batchify.lengths"] = _list(padded), _list(lengths)
    out["batchify.labels"] = _list(labels)
    out["batchify.dtypes"] = [str(padded.dtype.__name__), str(labels.dtype.__name__)]
    dict_fn = nlp.data.batchify.Dict({"a": nlp.data.batchify.Pad(pad_val=0),
                                      "b": nlp.data.batchify.List()})
    d = dict_fn([{"a": [1, 2], "b": "x"}, {"a": [3], "b": "y"}])
    out["batchify.dict"] = _list(d["a"]) + d["b"]


def loader(out):
    """GluonNLP's own loader, whose worker processes pickle batches with ForkingPickler."""
    samples = mx.gluon.data.SimpleDataset([([i] * (i % 3 + 1), float(i)) for i in range(7)])
    fn = nlp.data.batchify.Tuple(nlp.data.batchify.Pad(pad_val=0), nlp.data.batchify.Stack())
    for name, kw in (("processes", {}), ("threads", {"thread_pool": True})):
        batches = nlp.data.ShardedDataLoader(samples, batch_size=3, batchify_fn=fn,
                                             num_workers=2, **kw)
        out[f"loader.{name}"] = [v for data, label in batches
                                 for v in _list(data) + _list(label)]


def samplers(out):
    lengths = [5, 9, 2, 7, 3, 8, 1, 6, 4, 10, 3, 2]
    fixed = nlp.data.FixedBucketSampler(lengths, batch_size=3, num_buckets=3, shuffle=False)
    out["sampler.fixed"] = [i for batch in fixed for i in batch]
    out["sampler.fixed_batches"] = [len(fixed)]
    np.random.seed(3)
    sorted_ = nlp.data.SortedBucketSampler(lengths, batch_size=4, mult=2, shuffle=True)
    out["sampler.sorted"] = [i for batch in sorted_ for i in batch]
    random.seed(3)                              # SplitSampler shuffles with Python's random
    split = nlp.data.SplitSampler(len(lengths), num_parts=3, part_index=1)
    out["sampler.split"] = list(split)


def bptt(out, v):
    corpus = [t for s in TEXT for t in s.split() + ["<eos>"]]
    flat_batches = nlp.data.batchify.CorpusBatchify(v, batch_size=3)(corpus)
    out["bptt.corpus"] = _list(flat_batches[:])
    batches = nlp.data.batchify.CorpusBPTTBatchify(v, seq_len=4, batch_size=2,
                                                   last_batch="keep")(corpus)
    flat = []
    for data, label in batches:
        flat += _list(data) + _list(label)
    out["bptt.batches"] = [len(batches)] + flat


def _decoder(vocab_size=8, hidden=6):
    rs = np.random.RandomState(11)
    emb = mx.nd.array(rs.normal(0, 1, (vocab_size, hidden)))
    rec = mx.nd.array(rs.normal(0, 0.5, (hidden, hidden)))
    proj = mx.nd.array(rs.normal(0, 1.5, (hidden, vocab_size)))

    def step(inputs, states):
        h = mx.nd.tanh(mx.nd.take(emb, inputs) + mx.nd.dot(states, rec))
        return mx.nd.log_softmax(mx.nd.dot(h, proj)), h
    return step, hidden


def beam_search(out):
    step, hidden = _decoder()
    scorer = nlp.model.BeamSearchScorer(alpha=0.5, K=2.0)
    sampler = nlp.model.BeamSearchSampler(beam_size=3, decoder=step, eos_id=1, scorer=scorer,
                                          max_length=7)
    init = mx.nd.array([2, 5])
    states = mx.nd.array(np.linspace(-1, 1, 2 * hidden).reshape(2, hidden))
    samples, scores, lengths = sampler(init, states)
    out["beam.samples"], out["beam.scores"] = _list(samples), _list(scores)
    out["beam.lengths"] = _list(lengths)
    hybrid = nlp.model.HybridBeamSearchSampler(2, 3, step, eos_id=1, scorer=scorer,
                                               max_length=7, vocab_size=8)
    samples, scores, lengths = hybrid(init, states)            # not hybridized
    out["beam.hybrid"] = _list(samples) + _list(scores) + _list(lengths)


def embedding(out, folder):
    path = folder / "vectors.txt"
    path.write_text("the 0.1 0.2 0.3\ncat 0.5 -0.5 1.0\ndog 0.4 -0.4 0.9\n"
                    "mat -1.0 0.0 0.25\n")
    emb = nlp.embedding.TokenEmbedding.from_file(str(path), elem_delim=" ")
    out["emb.tokens"] = emb.idx_to_token
    out["emb.cat"] = _list(emb["cat"])
    v = nlp.Vocab(nlp.data.count_tokens(["the", "cat", "cat", "zebra"]))
    v.set_embedding(emb)
    out["emb.vocab"] = _list(v.embedding.idx_to_vec)
    sim = nlp.embedding.evaluation.CosineSimilarity()
    vecs = v.embedding.idx_to_vec
    out["emb.cosine"] = _list(sim(vecs[v["cat"]:v["cat"] + 1], vecs[v["the"]:v["the"] + 1]))


def main(path):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        v = vocab(out)
        bert_tokenizer(out, folder)
        batchify(out)
        loader(out)
        samplers(out)
        bptt(out, v)
        beam_search(out)
        embedding(out, folder)
    Path(path).write_text(json.dumps(out, indent=0, sort_keys=True, default=_plain))


def _plain(x):
    return x.item()         # numpy scalars


if __name__ == "__main__":
    main(sys.argv[1])
