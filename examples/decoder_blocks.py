"""Decoder blocks of the two model families users run most, in plain torch.nn: a GPT-2
block (pre-norm, causal self-attention, tanh-GELU MLP) and a LLaMA block (RMSNorm, rotary
position embeddings, grouped-query attention, SwiGLU). Random weights; the sizes are the
caller's. `test/e2e/test_model_suite.py` checks them against eager PyTorch through
torch.export and torch.compile; `benchmarks/cpu.py` times them against eager and
torch.compile.
"""

import torch
from torch import nn
from torch.nn import functional as F


class GPT2Block(nn.Module):
    """Pre-norm decoder block: causal self-attention (nn.MultiheadAttention with a causal
    mask, or scaled_dot_product_attention with is_causal), then a tanh-GELU MLP."""

    def __init__(self, width: int, heads: int, sdpa: bool):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        if sdpa:
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        else:
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def attention(self, x):
        b, t, c = x.shape
        if not self.sdpa:
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
            return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(width) + 0.1 * torch.randn(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    """RMSNorm, grouped-query attention with rotary position embeddings, SwiGLU MLP."""

    def __init__(self, width: int, heads: int, kv_heads: int, hidden: int, seq: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.q_proj = nn.Linear(width, width, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(width, width, bias=False)
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)
        self.norm_1, self.norm_2 = RMSNorm(width), RMSNorm(width)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def attention(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        groups = self.heads // self.kv_heads
        k, v = (z.repeat_interleave(groups, dim=1) for z in (k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, -1))

    def forward(self, x):
        x = x + self.attention(self.norm_1(x))
        h = self.norm_2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))
