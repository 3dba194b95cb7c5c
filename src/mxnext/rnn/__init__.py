"""MXNet 1.x's symbolic RNN API, ``mx.rnn``: cells that build recurrent networks as symbols
(step cells, the fused ``RNN`` op, stacks, bidirectional and modifier cells, convolutional
cells), checkpoints that store their weights unpacked, and ``BucketSentenceIter``."""

from . import io
from ._params import RNNParams
from .base_cell import BaseRNNCell, rnn_unroll
from .cells import DropoutCell, GRUCell, LSTMCell, RNNCell
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNNCell
from .io import BucketSentenceIter, encode_sentences
from .modifiers import ModifierCell, ResidualCell, ZoneoutCell
from .stacks import BidirectionalCell, SequentialRNNCell

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "BidirectionalCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell",
           "ConvGRUCell", "rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint",
           "do_rnn_checkpoint", "encode_sentences", "BucketSentenceIter", "io"]

