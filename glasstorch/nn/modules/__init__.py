"""torch.nn.modules: every layer class, one file per family as in PyTorch."""
from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Bilinear, Identity, Linear
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (
    MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d,
    FractionalMaxPool3d)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d
from .sparse import Embedding, EmbeddingBag
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
    ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
    ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .activation import (
    Threshold, ReLU, Hardtanh, ReLU6, Sigmoid, Hardsigmoid, Tanh, SiLU, Mish, Hardswish,
    ELU, CELU, SELU, GLU, GELU, Hardshrink, LeakyReLU, LogSigmoid, Softplus, Softshrink,
    MultiheadAttention, PReLU, Softsign, Tanhshrink, Softmin, Softmax, Softmax2d, LogSoftmax,
    RReLU)
from .loss import (
    L1Loss, NLLLoss, NLLLoss2d, PoissonNLLLoss, KLDivLoss, MSELoss, BCELoss,
    BCEWithLogitsLoss, HingeEmbeddingLoss, SmoothL1Loss, HuberLoss, CrossEntropyLoss,
    MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MarginRankingLoss, TripletMarginLoss,
    GaussianNLLLoss, SoftMarginLoss, MultiLabelMarginLoss, MultiMarginLoss, CTCLoss,
    TripletMarginWithDistanceLoss, LinearCrossEntropyLoss)
from .channelshuffle import ChannelShuffle
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .distance import PairwiseDistance, CosineSimilarity
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer)
from .lazy import (
    LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)

__all__ = [
    'Module', 'Container', 'Sequential', 'ModuleList', 'ModuleDict', 'ParameterList',
    'ParameterDict', 'Bilinear', 'Identity', 'Linear', 'Conv1d', 'Conv2d',
    'ConvTranspose1d', 'ConvTranspose2d', 'MaxPool1d', 'MaxPool2d', 'AvgPool1d',
    'AvgPool2d', 'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d', 'AdaptiveAvgPool1d',
    'AdaptiveAvgPool2d', 'BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'InstanceNorm1d',
    'InstanceNorm2d', 'InstanceNorm3d', 'LayerNorm', 'GroupNorm', 'RMSNorm', 'Embedding',
    'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout',
    'Flatten', 'Unflatten', 'CircularPad1d', 'CircularPad2d', 'CircularPad3d',
    'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ReflectionPad1d', 'ReflectionPad2d',
    'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d',
    'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d', 'Upsample', 'UpsamplingNearest2d',
    'UpsamplingBilinear2d', 'PixelShuffle', 'PixelUnshuffle', 'Threshold', 'ReLU',
    'Hardtanh', 'ReLU6', 'Sigmoid', 'Hardsigmoid', 'Tanh', 'SiLU', 'Mish', 'Hardswish',
    'ELU', 'CELU', 'SELU', 'GLU', 'GELU', 'Hardshrink', 'LeakyReLU', 'LogSigmoid',
    'Softplus', 'Softshrink', 'MultiheadAttention', 'PReLU', 'Softsign', 'Tanhshrink',
    'Softmin', 'Softmax', 'Softmax2d', 'LogSoftmax', 'L1Loss', 'NLLLoss', 'NLLLoss2d',
    'PoissonNLLLoss', 'KLDivLoss', 'MSELoss', 'BCELoss', 'BCEWithLogitsLoss',
    'HingeEmbeddingLoss', 'SmoothL1Loss', 'HuberLoss', 'CrossEntropyLoss',
    'MultiLabelSoftMarginLoss', 'CosineEmbeddingLoss', 'MarginRankingLoss',
    'TripletMarginLoss', 'PairwiseDistance', 'CosineSimilarity', 'Transformer',
    'TransformerEncoder', 'TransformerDecoder', 'TransformerEncoderLayer',
    'TransformerDecoderLayer', 'RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell',
    'LSTMCell', 'GRUCell', 'GaussianNLLLoss', 'Conv3d', 'ConvTranspose3d', 'MaxPool3d',
    'AvgPool3d', 'AdaptiveMaxPool3d', 'AdaptiveAvgPool3d', 'MaxUnpool1d', 'MaxUnpool2d',
    'MaxUnpool3d', 'LPPool1d', 'LPPool2d', 'LPPool3d', 'FractionalMaxPool2d',
    'FractionalMaxPool3d', 'Fold', 'Unfold', 'EmbeddingBag', 'LazyLinear', 'LazyConv1d',
    'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d',
    'LazyConvTranspose3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d',
    'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d',
    'SyncBatchNorm', 'LocalResponseNorm', 'CrossMapLRN2d', 'RReLU', 'SoftMarginLoss',
    'MultiLabelMarginLoss', 'MultiMarginLoss', 'CTCLoss', 'TripletMarginWithDistanceLoss',
    'LinearCrossEntropyLoss', 'ChannelShuffle', 'AdaptiveLogSoftmaxWithLoss',
    'LinearCrossEntropyOptions',
]
