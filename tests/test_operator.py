"""mx.operator custom ops (CustomOp / CustomOpProp / register, mx.nd.Custom; the older
PythonOp / NumpyOp / NDArrayOp) and mx.util."""

import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError


@mx.operator.register("test_scaled_sigmoid")
class ScaledSigmoidProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return ScaledSigmoid(self.scale)


class ScaledSigmoid(mx.operator.CustomOp):
    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], self.scale / (1 + mx.nd.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0] / self.scale
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale * y * (1 - y))


def test_custom_forward_and_backward():
    xs = np.array([0.0, 1.0, -1.0], dtype=np.float32)
    x = mx.nd.array(xs)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_scaled_sigmoid", scale=3)
    s = 1 / (1 + np.exp(-xs))
    np.testing.assert_allclose(y.asnumpy(), 3 * s, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-5)


@mx.operator.register("test_sqr_aux")
class SqrAuxProp(mx.operator.CustomOpProp):
    """MXNet's test_custom_op 'sqr': an aux state written in forward and read in backward."""

    def list_auxiliary_states(self):
        return ["aux"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def infer_type(self, in_type):
        return in_type, [in_type[0]], [in_type[0]]

    def create_operator(self, ctx, shapes, dtypes):
        assert isinstance(ctx, mx.Context) and shapes == [[4, 10], [4, 10]] and dtypes == [0, 0]
        return SqrAux()


class SqrAux(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert (aux[0].asnumpy() == 1).all()
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("test_mult_no_top_grad")
class MultProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["lhs", "rhs"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Mult()


class Mult(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_grad == [None]           # not declared: need_top_grad=False
        self.assign(in_grad[0], req[0], in_data[1])
        self.assign(in_grad[1], req[1], in_data[0])


@pytest.mark.parametrize("engine", ["ThreadedEngine", "NaiveEngine"])
def test_custom_aux_state_in_autograd_and_executor(engine):
    xs = np.random.uniform(-1, 1, (4, 10)).astype(np.float32)
    with mx.engine.use_engine(engine):
        x, aux = mx.nd.array(xs), mx.nd.zeros((4, 10))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Custom(x, aux, name="sqr", op_type="test_sqr_aux")
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), xs * xs, rtol=1e-6)
        np.testing.assert_allclose(x.grad.asnumpy(), 2 * xs, rtol=1e-6)
        assert (aux.asnumpy() == 1).all()

        sym = mx.sym.Custom(data=mx.sym.var("data"), aux=mx.sym.var("aux"), name="sqr",
                            op_type="test_sqr_aux")
        assert sym.list_arguments() == ["data"] and sym.list_auxiliary_states() == ["aux"]
        sym = mx.sym.load_json(sym.tojson())
        ex = sym.simple_bind(mx.cpu(), data=(4, 10))
        ex.arg_dict["data"][:] = xs
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4, 10)))
        np.testing.assert_allclose(ex.outputs[0].asnumpy(), xs * xs, rtol=1e-6)
        np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), 2 * xs, rtol=1e-6)
        assert (ex.aux_dict["aux"].asnumpy() == 1).all()


def test_custom_without_top_grad_needs_no_head_gradient():
    a, b = mx.nd.random.uniform(shape=(3, 5)), mx.nd.random.uniform(shape=(3, 5))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(a, b, op_type="test_mult_no_top_grad")
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), b.asnumpy())
    np.testing.assert_allclose(b.grad.asnumpy(), a.asnumpy())
    sym = mx.sym.Custom(mx.sym.var("l"), mx.sym.var("r"), op_type="test_mult_no_top_grad")
    ex = sym.bind(mx.cpu(), {"l": a, "r": b}, args_grad={"l": mx.nd.zeros((3, 5)),
                                                        "r": mx.nd.zeros((3, 5))})
    ex.forward(is_train=True)
    ex.backward()                           # a loss-like op: no head gradient needed
    np.testing.assert_allclose(ex.grad_dict["l"].asnumpy(), b.asnumpy())


@mx.operator.register("test_softmax_loss")
class SoftmaxLossProp(mx.operator.CustomOpProp):
    """MXNet's example custom softmax: the label's shape comes from the data's."""

    seen = []

    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        SoftmaxLossProp.seen.append([list(s) for s in in_shape])
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return SoftmaxLoss()


class SoftmaxLoss(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(e / e.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        y[np.arange(len(y)), in_data[1].asnumpy().astype(int)] -= 1
        self.assign(in_grad[0], req[0], mx.nd.array(y))


def test_custom_loss_infers_its_label_shape_from_the_data():
    SoftmaxLossProp.seen.clear()
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    net = mx.sym.Custom(fc, name="softmax", op_type="test_softmax_loss")
    ex = net.simple_bind(mx.cpu(), data=(5, 3))
    assert SoftmaxLossProp.seen[0] == [[5, 4], []]      # the unknown label comes as []
    assert ex.arg_dict["softmax_label"].shape == (5,)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32) + 2 * (x[:, 1] > 0)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=10), num_epoch=30,
            optimizer_params={"learning_rate": 0.5})
    pred = mod.predict(mx.io.NDArrayIter(x, batch_size=10)).asnumpy().argmax(axis=1)
    assert (pred == y).mean() > 0.9


@mx.operator.register("test_gated")
class GatedProp(mx.operator.CustomOpProp):
    def __init__(self, gate):
        super().__init__()
        self.gate = GATES[gate]

    def create_operator(self, ctx, shapes, dtypes):
        return Gated(self.gate)


GATES = {}


class Gated(mx.operator.CustomOp):
    def __init__(self, gate):
        self.gate = gate

    def forward(self, is_train, req, in_data, out_data, aux):
        self.gate["thread"] = threading.current_thread()
        self.gate["was_opened"] = self.gate["opened"].wait(30)   # False if run synchronously
        self.assign(out_data[0], req[0], in_data[0] + 1)


def test_custom_forward_runs_through_the_engine_on_its_own_thread():
    """mx.nd.Custom returns before forward ran: forward waits for this thread to open its
    gate, which happens only after the call returned."""
    GATES["g"] = gate = {"opened": threading.Event()}
    y = mx.nd.Custom(mx.nd.zeros(3), op_type="test_gated", gate="g")
    gate["opened"].set()
    np.testing.assert_allclose(y.asnumpy(), np.ones(3))
    assert gate["was_opened"] and gate["thread"] is not threading.current_thread()


def _dot_op(name, forward):
    class Dot(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            forward(in_data, out_data)

    @mx.operator.register(name)
    class DotProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["a", "b"]

        def infer_shape(self, in_shape):
            return in_shape, [(in_shape[0][0], in_shape[1][1])]

        def create_operator(self, ctx, shapes, dtypes):
            return Dot()


def _fails(in_data, out_data):
    raise ValueError("broken forward")


def _pushes_failing_work(in_data, out_data):
    # an op whose kernel fails when it runs (a Custom whose forward raises), not waited on
    out_data[0][:] = mx.nd.Custom(in_data[0], in_data[1], op_type="test_dot_fails")


def _pushes_bad_shapes(in_data, out_data):
    out_data[0][:] = mx.nd.dot(in_data[0], in_data[0])


@pytest.mark.parametrize("op_type, forward, match", [
    ("test_dot_fails", _fails, "broken forward"),
    ("test_dot_bad_shapes", _pushes_bad_shapes, "dot"),
    ("test_dot_nested_failure", _pushes_failing_work, "broken forward")])
def test_custom_forward_errors_surface_once_at_the_wait(op_type, forward, match):
    _dot_op("test_dot_fails", _fails)
    _dot_op(op_type, forward)
    c = mx.nd.Custom(mx.nd.zeros((4, 2)), mx.nd.zeros((2, 4)), op_type=op_type)
    with pytest.raises(MXNetError, match=match):
        c.wait_to_read()
    mx.nd.waitall()                         # raised once: nothing left to raise


@mx.operator.register("test_no_input")
class NoInputProp(mx.operator.CustomOpProp):
    def __init__(self, length, depth):
        super().__init__()
        self.shape = (int(length), int(depth))

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [self.shape], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        shape = self.shape

        class Ones(mx.operator.CustomOp):
            def forward(self, is_train, req, in_data, out_data, aux):
                self.assign(out_data[0], req[0], np.ones(shape, np.float32))
        return Ones()


def test_custom_op_without_inputs_and_its_kwargs_are_strings():
    with mx.autograd.record():
        x = mx.nd.Custom(length=3, depth=2, op_type="test_no_input")
    np.testing.assert_array_equal(x.asnumpy(), np.ones((3, 2)))
    sym = mx.sym.Custom(length=3, depth=2, op_type="test_no_input", name="ones")
    assert '"length": "3"' in sym.tojson() and sym.infer_shape()[1] == [(3, 2)]


def test_unknown_custom_op():
    with pytest.raises(MXNetError, match="test_scaled_sigmod.*did you mean"):
        mx.nd.Custom(mx.nd.ones(1), op_type="test_scaled_sigmod")


def test_register_requires_prop_class():
    with pytest.raises(MXNetError):
        mx.operator.register("bad")(object)


class NumpySoftmaxLoss(mx.operator.NumpyOp):
    """MXNet's NumpyOp example: softmax forward, (p - onehot(label)) backward, no head
    gradient."""

    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]

    def forward(self, in_data, out_data):
        x = in_data[0] - in_data[0].max(axis=1, keepdims=True)
        out_data[0][:] = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_data[0]
        in_grad[0][np.arange(len(in_data[1])), in_data[1].astype(int)] -= 1


class NDArrayDouble(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 2


def test_python_ops_run_in_graphs():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], np.float32)
    label = np.array([2, 0], np.float32)
    net = NumpySoftmaxLoss().get_symbol(mx.sym.var("data"), mx.sym.var("label"), name="sm")
    assert net.list_arguments() == ["data", "label"] and net.list_outputs() == ["sm_output"]
    ex = net.simple_bind(mx.cpu(), data=x.shape, label=label.shape,
                         grad_req={"data": "add", "label": "null"})
    ex.grad_dict["data"][:] = 1
    ex.forward(is_train=True, data=x, label=label)
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), p, rtol=1e-6)
    ex.backward()                                       # no head gradient needed
    p[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), 1 + p, rtol=1e-6)

    double = NDArrayDouble()
    y = double(mx.sym.var("x"), name="dbl")             # __call__ is get_symbol
    ex = y.bind(mx.cpu(), args=[mx.nd.array([1.0, -2.0])], args_grad=[mx.nd.zeros(2)])
    ex.forward(is_train=True)
    ex.backward(mx.nd.array([1.0, 3.0]))
    assert ex.outputs[0].asnumpy().tolist() == [2.0, -4.0]
    assert ex.grad_arrays[0].asnumpy().tolist() == [2.0, 6.0]
    assert double.get_symbol(mx.sym.var("z")).list_outputs()[0].endswith("_output")


def test_util(tmp_path):
    d = tmp_path / "a" / "b"
    mx.util.makedirs(str(d))
    mx.util.makedirs(str(d))
    assert d.is_dir()
    assert mx.util.is_np_array() is False
    mx.util.setenv("MXNEXT_TEST_UTIL_VAR", 3)
    assert mx.util.getenv("MXNEXT_TEST_UTIL_VAR") == "3"
    mx.util.setenv("MXNEXT_TEST_UTIL_VAR", None)
    assert mx.util.getenv("MXNEXT_TEST_UTIL_VAR") is None


def test_registered_operators_and_their_arguments():
    ops = mx.operator.get_all_registered_operators()
    assert "Activation" in ops and "Custom" in ops and "_npi_Custom" in ops      # aliases too
    args = mx.operator.get_operator_arguments("Activation")
    assert isinstance(args, mx.operator.OperatorArguments)
    assert args.names == ["data", "act_type"] and args.narg == 2
    assert args.types == ["NDArray-or-Symbol",
                          "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    leaky = mx.operator.get_operator_arguments("LeakyReLU")
    assert leaky.types[leaky.names.index("slope")] == "float, optional, default=0.25"


class _SparseSqr(mx.operator.CustomOp):
    seen = []

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        _SparseSqr.seen.append((x.stype, out_data[0].stype))
        if x.stype == "csr":
            y = mx.nd.sparse.csr_matrix((x.data * x.data, x.indices, x.indptr), shape=x.shape)
        else:
            y = x * x
        self.assign(out_data[0], req[0], y)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _SparseSqr.seen.append((out_grad[0].stype, in_data[0].stype, in_grad[0].stype))
        self.assign(in_grad[0], req[0],
                    2 * mx.nd.sparse.elemwise_mul(in_data[0], out_grad[0]))


@mx.operator.register("test_sparse_sqr")
class _SparseSqrProp(mx.operator.CustomOpProp):
    def infer_storage_type(self, in_stype):
        return in_stype, [in_stype[0]], []

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        return ograd_stype, in_stype, out_stype, ["row_sparse"]      # 4 lists: no aux

    def create_operator(self, ctx, shapes, dtypes):
        return _SparseSqr()


@mx.operator.register("test_dense_only_sqr")
class _DenseOnlyProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _SparseSqr()


def test_custom_op_storage_types_follow_infer_storage_type():
    """As MXNet: a csr input reaches ``forward`` as a CSRNDArray and the output has the
    storage type ``infer_storage_type`` names; ``backward`` gets its arrays in the types
    ``infer_storage_type_backward`` names (here a row_sparse input gradient, written back
    into the dense gradient buffer)."""
    dense = np.array([[0, 2, 0], [3, 0, 4]], dtype=np.float32)
    x = mx.nd.array(dense).tostype("csr")
    x.attach_grad()
    _SparseSqr.seen.clear()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_sparse_sqr")
    y.backward(out_grad=mx.nd.ones((2, 3)).tostype("csr"))
    assert y.stype == "csr"
    np.testing.assert_allclose(y.asnumpy(), dense ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * dense)
    # the csr head gradient reaches infer_storage_type_backward densified (mxnext's
    # stateful backward takes dense memory), so as passed through it stays dense
    assert _SparseSqr.seen == [("csr", "csr"), ("default", "csr", "row_sparse")]


def test_custom_op_default_infer_storage_type_refuses_sparse_inputs():
    x = mx.nd.array(np.eye(2, dtype=np.float32)).tostype("csr")
    with pytest.raises(MXNetError, match=r"infer_storage_type: in_stype\[0\] is 'csr'"):
        mx.nd.Custom(x, op_type="test_dense_only_sqr")
