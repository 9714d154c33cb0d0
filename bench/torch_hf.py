#!/usr/bin/python3
"""The Hugging Face benchmark's PyTorch side: the qwen2 fixture (test/fixtures/hf/qwen2) read from its
safetensors, the same decoder (RMSNorm, rotary embeddings, grouped-query attention with q/k/v biases,
SwiGLU, tied head) with LoRA adapters on every linear layer, and the same workloads as bench/hfModel.ts.

Usage: /usr/bin/python3 torch_hf.py '<json: {"dir": ..., "threads": N, "rounds": R, "rank": r, "train": [B, T], "sample": [B, P, N]}>'
Prints one JSON line: median training and sampling tokens/s.
"""
import json
import math
import os
import statistics
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

WARMUP = 2


def load(dirname):
    with open(os.path.join(dirname, 'model.safetensors'), 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == '__metadata__':
            continue
        b, end = e['data_offsets']
        assert e['dtype'] == 'F32'
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype=np.float32).copy()).view(*e['shape'])
    return out


class Lora(torch.nn.Module):
    def __init__(self, w, b, rank, alpha):
        super().__init__()
        self.w = w  # [out, in], frozen
        self.b = b
        self.a = torch.nn.Parameter(torch.empty(rank, w.shape[1]).uniform_(-1 / math.sqrt(w.shape[1]), 1 / math.sqrt(w.shape[1])))
        self.bb = torch.nn.Parameter(torch.zeros(w.shape[0], rank))
        self.scale = alpha / rank

    def forward(self, x):
        y = F.linear(x, self.w, self.b)
        return y + (x @ self.a.T @ self.bb.T) * self.scale


class Qwen2(torch.nn.Module):
    def __init__(self, cfg, W, rank):
        super().__init__()
        self.cfg = cfg
        D, H, K = cfg['hidden_size'], cfg['num_attention_heads'], cfg['num_key_value_heads']
        self.H, self.K, self.E = H, K, D // H
        self.embed = W['model.embed_tokens.weight']
        self.layers = torch.nn.ModuleList()
        for l in range(cfg['num_hidden_layers']):
            p = f'model.layers.{l}.'
            m = torch.nn.Module()
            for n in ('q_proj', 'k_proj', 'v_proj', 'o_proj'):
                setattr(m, n, Lora(W[p + 'self_attn.' + n + '.weight'], W.get(p + 'self_attn.' + n + '.bias'), rank, 2 * rank))
            for n in ('gate_proj', 'up_proj', 'down_proj'):
                setattr(m, n, Lora(W[p + 'mlp.' + n + '.weight'], None, rank, 2 * rank))
            m.ln1 = W[p + 'input_layernorm.weight']
            m.ln2 = W[p + 'post_attention_layernorm.weight']
            self.layers.append(m)
        self.norm = W['model.norm.weight']
        inv = 1.0 / (cfg['rope_theta'] ** (torch.arange(0, self.E, 2, dtype=torch.float64) / self.E))
        freqs = torch.outer(torch.arange(cfg['max_position_embeddings'], dtype=torch.float64), inv)
        emb = torch.cat([freqs, freqs], -1)
        self.cos, self.sin = emb.cos().float(), emb.sin().float()

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg['rms_norm_eps']) * w

    def rope(self, x, pos):
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]  # [T, 1, E] → broadcast over [B, h, T, E] via transpose below
        cos, sin = cos.transpose(0, 1), sin.transpose(0, 1)
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], -1)
        return x * cos + rot * sin

    def forward(self, ids, start=0, cache=None):
        B, T = ids.shape
        pos = torch.arange(start, start + T)
        x = self.embed[ids]
        new_cache = []
        for i, m in enumerate(self.layers):
            h = self.rms(x, m.ln1)
            q = m.q_proj(h).view(B, T, self.H, self.E).transpose(1, 2)
            k = m.k_proj(h).view(B, T, self.K, self.E).transpose(1, 2)
            v = m.v_proj(h).view(B, T, self.K, self.E).transpose(1, 2)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if cache is not None:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
            new_cache.append((k, v))
            g = self.H // self.K
            kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
            att = q @ kk.transpose(-1, -2) / math.sqrt(self.E)
            if T > 1:
                tk = kk.shape[2]
                mask = torch.ones(T, tk, dtype=torch.bool).tril(diagonal=tk - T)
                att = att.masked_fill(~mask, float('-inf'))
            y = (att.softmax(-1) @ vv).transpose(1, 2).reshape(B, T, -1)
            x = x + m.o_proj(y)
            h = self.rms(x, m.ln2)
            x = x + m.down_proj(F.silu(m.gate_proj(h)) * m.up_proj(h))
        return self.rms(x, self.norm) @ self.embed.T, new_cache


def main():
    o = json.loads(sys.argv[1])
    torch.set_num_threads(o['threads'])
    torch.manual_seed(1)
    with open(os.path.join(o['dir'], 'config.json')) as f:
        cfg = json.load(f)
    model = Qwen2(cfg, load(o['dir']), o['rank'])
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    V = cfg['vocab_size']
    B, T = o['train']
    ids = torch.randint(0, V, (B, T))

    def train():
        logits, _ = model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    SB, P, N = o['sample']

    @torch.no_grad()
    def sample():
        prompt = torch.randint(0, V, (SB, P))
        logits, cache = model(prompt)
        nxt = torch.multinomial(logits[:, -1].softmax(-1), 1)
        for s in range(N - 1):
            logits, cache = model(nxt, P + s, cache)
            nxt = torch.multinomial(logits[:, -1].softmax(-1), 1)

    rates = {'train': [], 'sample': []}
    for r in range(WARMUP + o['rounds']):
        t = time.perf_counter()
        train()
        dt = time.perf_counter() - t
        t = time.perf_counter()
        sample()
        ds = time.perf_counter() - t
        if r >= WARMUP:
            rates['train'].append(B * (T - 1) / dt)
            rates['sample'].append(SB * N / ds)
    print(json.dumps({'torch': torch.__version__, 'threads': o['threads'], 'train': statistics.median(rates['train']), 'sample': statistics.median(rates['sample'])}))


if __name__ == '__main__':
    main()
