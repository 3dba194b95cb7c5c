"""What the gluon-tests runner runs, and which tests stand aside from the score (and why)."""

UPSTREAM = {"repo": "apache/mxnet", "branch": "v1.9.x",
            "commit": "76d73dbd778c9ab4a4584dbc857c8c0694faa162"}
BASELINE = "baseline-mxnet-1.9.1.json"

TEST_TIMEOUT_S = 300        # per test: past it the process is killed and the file resumes
GLOBAL_TIMEOUT_S = 5400     # whole run: tests not reached by then are "not_run"
MEMORY_GB = 8.0             # a test process past this resident size is killed (MXNet's peak: 6.3)
SEED = 1234                 # MXNET_MODULE_SEED and MXNET_TEST_SEED

# Run order: quick files first.
FILES = [
    "test_exc_handling.py", "test_gluon_save.py", "test_gluon_utils.py", "test_loss.py",
    "test_gluon_trainer.py", "test_gluon_data_vision.py", "test_gluon_data.py",
    "test_gluon_rnn.py", "test_gluon_model_zoo.py", "test_gluon.py",
]
# Files of which only these tests run (the rest is another yardstick's: mxnet-tests).
ONLY = {"test_exc_handling.py": ["test_exc_gluon"]}
# Third-party modules a file imports besides pytest and numpy.
NEEDS = {"test_gluon.py": ["scipy"], "test_gluon_utils.py": ["requests"]}

# tests/ with each file's git blob id at UPSTREAM["commit"]; an edited file is reported.
BLOBS = {
    "python/unittest/common.py": "9e51a3d46029b6e0c72e07886c5f72a41f9d56a2",
    "python/common/models.py": "b563adc1d76060db5821324a02716ca595af7f2d",
    "python/unittest/test_exc_handling.py": "e3c333705260b768929693a9f364ec724549d67a",
    "python/unittest/test_gluon.py": "130a32c406a260df6ec01d31af97974209c6c514",
    "python/unittest/test_gluon_data.py": "a2b816460f699057801996cbe9181499760d5388",
    "python/unittest/test_gluon_data_vision.py": "b53dbf0687d3ceb232913c55b7045983a1f24409",
    "python/unittest/test_gluon_model_zoo.py": "d53dd403a5b8f7e5c253623e642f685ffa7dfd44",
    "python/unittest/test_gluon_rnn.py": "0c34d55971d0cae4859570e29c6d5ae4719c2f25",
    "python/unittest/test_gluon_save.py": "95ae7d91b256b010982dda13cc8aa84043f01346",
    "python/unittest/test_gluon_trainer.py": "350700cc129ffab8309e48af0d3e09ad5150e3ad",
    "python/unittest/test_gluon_utils.py": "c40379893b0db0d831d5b44af07dfce242746b5f",
    "python/unittest/test_loss.py": "4eb1ec0c50df67d7f686ca5c1bcec5ac720f5534",
}

# Run and reported, but outside the score: file -> test -> (category, what in it).
CATEGORIES = {
    "gpu": "needs a GPU (or only exercises one)",
}
ASIDE = {
    "test_gluon.py": {
        "test_sync_batchnorm": ("gpu", "loops over the GPUs; none on CPU"),
    },
}
