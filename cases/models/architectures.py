"""Tiny transformer architectures in plain PyTorch, exported as conformance
cases by export_models.py: a Llama-style decoder (grouped-query attention,
rotary embeddings, RMSNorm, SwiGLU MLP) with an optional key/value cache, a
vision transformer and a BERT-like encoder. Sizes are tiny on purpose (hidden
64, 2 layers, vocabulary 128) so that each case stays well under 1 MB."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Config:
    vocab: int = 128
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2  # grouped-query attention: two query heads share one key/value head
    intermediate: int = 128
    max_positions: int = 32
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def init_weights(module: nn.Module, generator: torch.Generator) -> None:
    """Seeded weights that make every part of the graph matter: matrices with
    unit-variance outputs (std 1/sqrt(fan_in)), so attention is far from
    uniform, and norm scales and biases that are neither 1 nor 0, so a
    backend that drops them fails."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("norm.weight") or name.endswith("norm1.weight") or name.endswith("norm2.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=generator))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=generator))
            else:
                fan_in = p[0].numel() if p.dim() > 1 else p.numel()
                if "embed" in name or "token" in name or "position" in name:
                    fan_in = 1  # embeddings are looked up, not multiplied: unit variance
                p.copy_(torch.randn(p.shape, generator=generator) / math.sqrt(fan_in))


# --- Llama-style decoder -----------------------------------------------------


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """The non-interleaved rotary form: the first half of the head pairs with the second."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class RotaryTable(nn.Module):
    """cos and sin of position * inverse frequency, one row per position."""

    def __init__(self, cfg: Config):
        super().__init__()
        half = cfg.head_dim // 2
        inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(half, dtype=torch.float64) / half))
        angles = torch.arange(cfg.max_positions, dtype=torch.float64)[:, None] * inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # [batch, seq] -> [batch, 1, seq, head_dim], broadcast over heads.
        return self.cos[position_ids].unsqueeze(1), self.sin[position_ids].unsqueeze(1)


class LlamaAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        d = cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * d, bias=False)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(cfg.heads * d, cfg.hidden, bias=False)

    def forward(self, x, cos, sin, past_key=None, past_value=None):
        b, s, _ = x.shape
        d = self.cfg.head_dim
        q = self.q_proj(x).view(b, s, self.cfg.heads, d).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.cfg.kv_heads, d).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.cfg.kv_heads, d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_key is not None:
            # A decode step: the new token attends to every cached position and
            # itself, so no causal mask is needed.
            k = torch.cat((past_key, k), dim=2)
            v = torch.cat((past_value, v), dim=2)
            causal = False
        else:
            causal = True
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        out = out.transpose(1, 2).reshape(b, s, self.cfg.heads * d)
        return self.o_proj(out), k, v


class SwiGluMlp(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.up_proj = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate, cfg.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.input_norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.attn = LlamaAttention(cfg)
        self.post_attn_norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.mlp = SwiGluMlp(cfg)

    def forward(self, x, cos, sin, past_key=None, past_value=None):
        attn, key, value = self.attn(self.input_norm(x), cos, sin, past_key, past_value)
        x = x + attn
        return x + self.mlp(self.post_attn_norm(x)), key, value


class LlamaDecoder(nn.Module):
    """Returns logits and, per layer, the key and value cache after this call."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab, cfg.hidden)
        self.rotary = RotaryTable(cfg)
        self.layers = nn.ModuleList(LlamaBlock(cfg) for _ in range(cfg.layers))
        self.norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def forward(self, input_ids, position_ids, past=None):
        cos, sin = self.rotary(position_ids)
        x = self.embed_tokens(input_ids)
        present = []
        for i, layer in enumerate(self.layers):
            past_key, past_value = past[i] if past is not None else (None, None)
            x, key, value = layer(x, cos, sin, past_key, past_value)
            present.append((key, value))
        return self.lm_head(self.norm(x)), present


class LlamaPrefill(nn.Module):
    """The whole prompt at once: input_ids -> logits, positions 0..S-1."""

    def __init__(self, decoder: LlamaDecoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], dtype=torch.int64).unsqueeze(0)
        logits, _ = self.decoder(input_ids, positions)
        return logits


class LlamaDecodeStep(nn.Module):
    """One generated token with the key/value cache of the tokens before it;
    returns logits and the cache grown by one position (per layer)."""

    def __init__(self, decoder: LlamaDecoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, input_ids, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        logits, present = self.decoder(input_ids, position_ids,
                                       [(past_key_0, past_value_0), (past_key_1, past_value_1)])
        return logits, present[0][0], present[0][1], present[1][0], present[1][1]


# --- Vision transformer ------------------------------------------------------


class EncoderBlock(nn.Module):
    """A transformer encoder layer with LayerNorm, biased projections and the
    exact (erf) GELU; pre-norm for the vision transformer, post-norm for the
    BERT-like encoder."""

    def __init__(self, hidden: int, heads: int, intermediate: int, pre_norm: bool, eps: float):
        super().__init__()
        self.heads = heads
        self.pre_norm = pre_norm
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out_proj = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden, eps=eps)
        self.fc1 = nn.Linear(hidden, intermediate)
        self.fc2 = nn.Linear(intermediate, hidden)
        self.norm2 = nn.LayerNorm(hidden, eps=eps)

    def attention(self, x, mask):
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, h))

    def mlp(self, x):
        return self.fc2(F.gelu(self.fc1(x)))

    def forward(self, x, mask=None):
        if self.pre_norm:
            x = x + self.attention(self.norm1(x), mask)
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(x + self.mlp(x))


class VisionTransformer(nn.Module):
    """32x32 RGB images in 8x8 patches (16 patches and a class token) -> 10 class logits."""

    def __init__(self, hidden=64, layers=2, heads=4, intermediate=128, patch=8, image=32, classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, hidden, kernel_size=patch, stride=patch)
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.position_embed = nn.Parameter(torch.zeros(1, (image // patch) ** 2 + 1, hidden))
        self.blocks = nn.ModuleList(EncoderBlock(hidden, heads, intermediate, True, 1e-6) for _ in range(layers))
        self.norm = nn.LayerNorm(hidden, eps=1e-6)
        self.head = nn.Linear(hidden, classes)

    def forward(self, pixel_values):
        x = self.patch_embed(pixel_values).flatten(2).transpose(1, 2)  # [batch, patches, hidden]
        x = torch.cat((self.class_token.expand(x.shape[0], -1, -1), x), dim=1) + self.position_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


# --- BERT-like encoder -------------------------------------------------------


class BertEncoder(nn.Module):
    """Token and position embeddings, LayerNorm, post-norm layers whose
    attention skips the padded keys that attention_mask (1 keep, 0 pad)
    marks; returns the last hidden state and a tanh pooler of the first token."""

    def __init__(self, vocab=128, hidden=64, layers=2, heads=4, intermediate=128, max_positions=32):
        super().__init__()
        self.token_embed = nn.Embedding(vocab, hidden)
        self.position_embed = nn.Embedding(max_positions, hidden)
        self.embed_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.blocks = nn.ModuleList(EncoderBlock(hidden, heads, intermediate, False, 1e-12) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1], dtype=torch.int64).unsqueeze(0)
        x = self.embed_norm(self.token_embed(input_ids) + self.position_embed(positions))
        keep = attention_mask.bool()[:, None, None, :]  # [batch, 1, 1, keys]: broadcast over heads and queries
        for block in self.blocks:
            x = block(x, keep)
        return x, torch.tanh(self.pooler(x[:, 0]))
