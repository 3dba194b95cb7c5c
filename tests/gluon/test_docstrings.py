"""Gluon's main layers and the Trainer document every constructor argument in a numpydoc
"Parameters" section, as ``help(mx.nd.Convolution)`` does for the op."""

import inspect

import pytest

import mxnext as mx
from mxnext.gluon import nn

DOCUMENTED = [nn.Dense, nn.Conv1D, nn.Conv2D, nn.Conv3D, nn.Conv2DTranspose, nn.BatchNorm,
              nn.Dropout, nn.Embedding, mx.gluon.Trainer]


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda c: c.__name__)
def test_every_constructor_argument_is_in_the_parameters_section(cls):
    doc = inspect.getdoc(cls)
    assert "\nParameters\n----------\n" in doc, cls.__name__
    section = doc.split("\nParameters\n----------\n", 1)[1]
    entries = {name.strip() for line in section.splitlines()
               if line and not line[0].isspace() and " : " in line
               for name in line.split(" : ", 1)[0].split(",")}
    wanted = {name for name, p in inspect.signature(cls.__init__).parameters.items()
              if name != "self" and p.kind is not p.VAR_KEYWORD}
    assert wanted <= entries, f"{cls.__name__} does not document {sorted(wanted - entries)}"
