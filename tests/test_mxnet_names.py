"""mxnext._runtime.mxnet_names: MXNet 1.x names mxnext lacks say where they come from."""

import pytest

from mxnext._runtime import mxnet_names as _mxnet_names
from mxnext import ops as registry
from mxnext._runtime.mxnet_names import hint, suggest


def test_planned_distributions_are_named_never_offered_for_install(monkeypatch):
    import importlib.metadata as md

    def version(dist):
        raise md.PackageNotFoundError(dist)

    monkeypatch.setattr(md, "version", version)
    monkeypatch.setattr(_mxnet_names, "PLANNED", frozenset({"mxnext-device-cupy"}))
    assert hint("device", "gpu") == ("'gpu' is an MXNet 1.x device type provided by "
                                     "mxnext-device-cupy (planned, not yet released)")
    assert "KVStore type provided by mxnext-device-cupy (planned" in hint("kvstore", "nccl")
    assert "mxnext install" not in hint("device", "gpu")


def test_an_installed_distribution_is_named_with_its_status():
    assert hint("device", "gpu") == ("'gpu' is an MXNet 1.x device type provided by "
                                     "mxnext-device-cupy, which is installed but does not "
                                     "provide it here (`mxnext plugins` shows its status)")
    assert "KVStore type provided by mxnext-device-cupy, which is installed" in hint(
        "kvstore", "nccl")


def test_kvstore_types_say_where_they_come_from_or_why_not():
    for kv in ("dist_sync", "dist_sync_device", "dist_device_sync"):
        assert f"'{kv}' is an MXNet 1.x KVStore type provided by mxnext-kvstore-mpi" in hint(
            "kvstore", kv)
    assert hint("kvstore", "dist_async") == (
        "'dist_async' is an MXNet 1.x KVStore type mxnext does not provide: asynchronous "
        "updates need a parameter server, and mxnext-kvstore-mpi runs the synchronous types "
        "(dist_sync, dist_sync_device) over MPI allreduce")
    assert "builtin KVStore type" in hint("kvstore", "device")


def test_every_mxnet_nn_op_is_in_the_table():
    for op in ("FullyConnected", "softmax", "SoftmaxOutput", "Softmax", "_contrib_CTCLoss",
               "sgd_mom_update", "multi_sgd_mom_update", "SequenceReverse", "ROIPooling"):
        assert "MXNet 1.x operator provided by mxnext-ops-nn" in hint("op", op)


def test_released_distribution_not_installed_says_how_to_install(monkeypatch):
    import importlib.metadata as md

    def version(dist):
        raise md.PackageNotFoundError(dist)

    monkeypatch.setattr(md, "version", version)
    assert hint("kvstore", "dist_sync") == (
        "'dist_sync' is an MXNet 1.x KVStore type provided by mxnext-kvstore-mpi, which is not "
        "installed: `mxnext install mxnext-kvstore-mpi`")


def test_installed_distribution_that_lacks_the_name_says_so(tmp_path, monkeypatch):
    info = tmp_path / "mxnext_ops_nn-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mxnext-ops-nn\nVersion: 0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert hint("op", "Convolution") == (
        "'Convolution' is an MXNet 1.x operator provided by mxnext-ops-nn, which is installed "
        "but does not provide it here (`mxnext plugins` shows its status)")


def test_builtin_kvstore_comes_with_the_kvstore_feature():
    assert hint("kvstore", "local") == ("'local' is MXNet 1.x's builtin KVStore type; mxnext's "
                                        "builtin plugin registers it (`mxnext plugins` shows "
                                        "whether that failed)")


def test_plugin_names_of_planned_distributions():
    assert hint("plugin", "device-cupy").startswith("plugin 'device-cupy' comes with "
                                                    "mxnext-device-cupy, which is installed")
    assert hint("plugin", "mxnext-kvstore-mpi").startswith("plugin 'mxnext-kvstore-mpi' comes "
                                                           "with mxnext-kvstore-mpi, which ")
    assert hint("plugin", "my-ops") is None


@pytest.mark.parametrize("kind, name", [
    ("op", "relux"), ("op", "fullyconnected"), ("op", "_backward_FullyConnected"),
    ("device", "tpu"), ("device", "GPU"), ("kvstore", "dist"), ("op", "gpu"),
])
def test_names_mxnet_does_not_have_get_no_hint(kind, name):
    assert hint(kind, name) is None


def test_suggest_prefers_where_mxnet_names_come_from_over_look_alikes():
    assert suggest("op", "softmax", ["max", "softsign"]) == "; " + hint("op", "softmax")
    assert suggest("op", "relux", ["relu", "abs"]) == " (did you mean 'relu'?)"
    assert suggest("device", "tpu", ["gpux"]) == ""


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="kind must be one of"):
        hint("symbol", "x")


def test_table_holds_only_names_ops_tensor_does_not_define():
    defined = {n for op in registry.list_ops() if op.provider == "ops-tensor"
               for n in (op.name, *op.aliases)}
    assert defined, "ops-tensor is not loaded"
    for dist, names in _mxnet_names.OPS.items():
        assert not defined & set(names.split()), dist
