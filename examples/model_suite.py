"""Models users recognize, written in plain torch.nn at the sizes they run (sequences of
128-512, widths of 256-1024), with random weights (seeded): the CPU suite
(`test/e2e/test_model_suite.py`) and the GPU tests (`test/e2e/test_gpu.py`) run them through
strata against eager PyTorch. Needs only torch.
"""

import math

import torch
from decoder_blocks import GPT2Block, LlamaBlock

nn = torch.nn
F = torch.nn.functional


class BertLayer(nn.Module):
    """Post-norm encoder layer; the attention mask (1 for tokens, 0 for padding) becomes an
    additive bias on the scores, as BERT's extended attention mask does."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = (nn.Linear(width, width) for _ in range(3))
        self.o = nn.Linear(width, width)
        self.ln_1, self.ln_2 = nn.LayerNorm(width, eps=1e-12), nn.LayerNorm(width, eps=1e-12)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x, attention_mask):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (p(x).view(b, t, self.heads, d).transpose(1, 2) for p in (self.q, self.k, self.v))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + bias
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = self.ln_1(x + self.o(y))
        return self.ln_2(x + self.out(F.gelu(self.fc(x))))


class ViTLayer(nn.Module):
    """Pre-norm encoder layer (nn.MultiheadAttention, no mask), erf-GELU MLP."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(width, eps=1e-6), nn.LayerNorm(width, eps=1e-6)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class ConvNeXtBlock(nn.Module):
    """Depthwise 7x7, LayerNorm and the MLP over channels-last, layer scale, residual; then
    the classifier's global pooling of a channels-last tensor (a mean and a layout view)."""

    def __init__(self, channels: int):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.fc, self.out = nn.Linear(channels, 4 * channels), nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(0.5 + torch.rand(channels))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.out(F.gelu(self.fc(self.norm(y)))) * self.gamma
        x = x + y.permute(0, 3, 1, 2)
        return self.pool(x.contiguous(memory_format=torch.channels_last)).flatten(1)


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1):
    conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
    return [conv, nn.BatchNorm2d(cout)]


class InvertedResidual(nn.Module):
    """MobileNet v2: 1x1 expansion, 3x3 depthwise, 1x1 projection (ReLU6), residual."""

    def __init__(self, channels: int, expand: int):
        super().__init__()
        hidden = channels * expand
        self.block = nn.Sequential(
            *conv_bn(channels, hidden, 1),
            nn.ReLU6(),
            *conv_bn(hidden, hidden, 3, groups=hidden),
            nn.ReLU6(),
            *conv_bn(hidden, channels, 1),
        )

    def forward(self, x):
        return x + self.block(x)


class BasicBlock(nn.Module):
    """ResNet: two 3x3 conv-BN pairs; the first strided, with a 1x1 projection shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(
            *conv_bn(cin, cout, 3, stride), nn.ReLU(), *conv_bn(cout, cout, 3)
        )
        self.shortcut = nn.Sequential(*conv_bn(cin, cout, 1, stride))

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


class LSTMModel(nn.Module):
    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.lstm = nn.LSTM(width, hidden, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


def _randomize_norm_statistics(model: nn.Module) -> nn.Module:
    """Batch norms with running statistics and affine weights away from the identity, so
    that folding them is tested."""
    generator = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(c, generator=generator))
            m.running_var.copy_(0.5 + torch.rand(c, generator=generator))
            m.weight.data.copy_(0.5 + torch.rand(c, generator=generator))
            m.bias.data.copy_(0.1 * torch.randn(c, generator=generator))
    return model


def _padding_mask(batch: int, seq: int) -> torch.Tensor:
    lengths = torch.tensor([seq, seq * 5 // 8])[:batch]
    return (torch.arange(seq)[None, :] < lengths[:, None]).to(torch.int64)


# name: (a model of random weights, its inputs)
MODELS = {
    "gpt2_mha_seq128": lambda: (GPT2Block(768, 12, sdpa=False), [(1, 128, 768)]),
    "gpt2_sdpa_seq512": lambda: (GPT2Block(256, 4, sdpa=True), [(1, 512, 256)]),
    "llama_gqa_seq256": lambda: (LlamaBlock(512, 8, 2, 1376, 256), [(1, 256, 512)]),
    "bert_padding_seq128": lambda: (BertLayer(768, 12), [(2, 128, 768), _padding_mask(2, 128)]),
    "vit_seq197": lambda: (ViTLayer(384, 6), [(1, 197, 384)]),
    "convnext_block": lambda: (ConvNeXtBlock(96), [(1, 96, 56, 56)]),
    "mobilenet_v2_inverted_residual": lambda: (InvertedResidual(32, 6), [(1, 32, 56, 56)]),
    "resnet_basic_block": lambda: (BasicBlock(64, 128, 2), [(1, 64, 56, 56)]),
    "lstm_seq128": lambda: (LSTMModel(256, 256), [(1, 128, 256)]),
}


def build(name: str):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    model = _randomize_norm_statistics(model).eval()
    inputs = [x if isinstance(x, torch.Tensor) else torch.randn(*x) for x in inputs]
    with torch.no_grad():
        expected = model(*inputs)
    return model, inputs, expected
