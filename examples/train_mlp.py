"""The main job: train a small MLP end to end with mx.nd + autograd and print its accuracy.

Data: three interleaved 2-D spirals (600 points, generated with a fixed seed), split
into train and test. Model: 2-64-64-3 with ReLU, softmax cross-entropy, SGD with momentum.
"""

import numpy as np

import mxnext as mx


def spirals(n_per_class=200, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in range(classes):
        r = np.linspace(0.05, 1.0, n_per_class)
        t = np.linspace(c * 4.2, (c + 1) * 4.2, n_per_class) + rng.normal(0, 0.2, n_per_class)
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        ys.append(np.full(n_per_class, c))
    x, y = np.concatenate(xs).astype(np.float32), np.concatenate(ys)
    order = rng.permutation(len(x))
    return x[order], y[order]


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = mx.nd.relu(mx.nd.broadcast_add(mx.nd.dot(x, w1), b1))
    h = mx.nd.relu(mx.nd.broadcast_add(mx.nd.dot(h, w2), b2))
    return mx.nd.broadcast_add(mx.nd.dot(h, w3), b3)


def cross_entropy(logits, onehot):
    shifted = mx.nd.broadcast_sub(logits, mx.nd.max(logits, axis=1, keepdims=True))
    log_z = mx.nd.log(mx.nd.sum(mx.nd.exp(shifted), axis=1, keepdims=True))
    return -mx.nd.mean(mx.nd.sum((shifted - log_z) * onehot, axis=1))


def main(epochs=300, lr=0.2, momentum=0.9):
    mx.random.seed(42)
    x, y = spirals()
    split = 450
    x_train, y_train = mx.nd.array(x[:split]), mx.nd.one_hot(mx.nd.array(y[:split]), depth=3)
    x_test, y_test = mx.nd.array(x[split:]), y[split:]

    shapes = [(2, 64), (64,), (64, 64), (64,), (64, 3), (3,)]
    params = [mx.nd.random.normal(0, (2.0 / s[0]) ** 0.5, shape=s) if len(s) == 2
              else mx.nd.zeros(s) for s in shapes]
    velocity = [mx.nd.zeros(s) for s in shapes]
    for p in params:
        p.attach_grad()

    for epoch in range(epochs):
        with mx.autograd.record():
            loss = cross_entropy(forward(params, x_train), y_train)
        loss.backward()
        for p, v in zip(params, velocity):
            v[:] = momentum * v - lr * p.grad
            p += v
        if epoch % 50 == 0 or epoch == epochs - 1:
            print(f"epoch {epoch:3d}  loss {loss.asscalar():.4f}")

    pred = mx.nd.argmax(forward(params, x_test), axis=1).asnumpy().astype(int)
    accuracy = float((pred == y_test).mean())
    print(f"test accuracy: {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
