#!/usr/bin/python3
"""Seed 000's workloads at its real scale in PyTorch, beside the workbench's engine (bench/seed000Scale.ts):
the scale checkpoint (test/helpers/scaleCheckpoint.ts: Qwen2.5-0.5B-Instruct's shapes, bfloat16 on disk)
read from its safetensors and computed in float32, LoRA rank 8 on every linear layer (alpha 16).
  sample: 12 rows × 256 new tokens from a 300-token prompt, KV cache, temperature 1
  train:  S sequences of 1,024 tokens: the reference pass (the base model, no gradient), then the
          policy's forward and backward pass (log-likelihood of positions 300 … 1,023) and AdamW
Also reports which BLAS PyTorch calls and its one-thread GFLOP/s on a 512² product, so a reference BLAS
(a few GFLOP/s) is never mistaken for a baseline.

Usage: /usr/bin/python3 torch_scale.py '<json: {"dir": ..., "threads": N, "sequences": S, "sample": [B, P, N], "what": ["sample", "train"]}>'
Prints one JSON line.
"""
import ctypes.util
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def blas():
    info = torch.__config__.show()
    lib = 'unknown'
    try:
        with open('/proc/self/maps') as f:
            libs = {line.split()[-1] for line in f if 'blas' in line.lower() and line.split()[-1].startswith('/')}
        lib = ', '.join(sorted(os.path.realpath(x) for x in libs)) or 'none mapped'
    except OSError:
        pass
    torch.set_num_threads(1)
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    for _ in range(3):
        a @ b
    t = time.perf_counter()
    n = 0
    while time.perf_counter() - t < 0.5:
        a @ b
        n += 1
    gflops = 2 * 512 ** 3 * n / (time.perf_counter() - t) / 1e9
    build = [part for part in info.replace(',', '\n').split('\n') if 'BLAS_INFO' in part]
    return {'library': lib, 'build': build[0].strip() if build else '', 'gflops1': gflops}


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
        raw = np.frombuffer(data[b:end], dtype=np.uint16).astype(np.uint32) << 16
        out[name] = torch.from_numpy(raw.view(np.float32).copy()).view(*e['shape'])
    return out


class Lora(torch.nn.Module):
    def __init__(self, w, b, rank):
        super().__init__()
        self.w, self.b = w, b
        self.a = torch.nn.Parameter(torch.empty(rank, w.shape[1]).uniform_(-1 / math.sqrt(w.shape[1]), 1 / math.sqrt(w.shape[1])))
        self.bb = torch.nn.Parameter(torch.zeros(w.shape[0], rank))
        self.scale = 2.0
        self.on = True

    def forward(self, x):
        y = F.linear(x, self.w, self.b)
        return y + (x @ self.a.T @ self.bb.T) * self.scale if self.on else y


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
                setattr(m, n, Lora(W[p + 'self_attn.' + n + '.weight'], W.get(p + 'self_attn.' + n + '.bias'), rank))
            for n in ('gate_proj', 'up_proj', 'down_proj'):
                setattr(m, n, Lora(W[p + 'mlp.' + n + '.weight'], None, rank))
            m.ln1, m.ln2 = W[p + 'input_layernorm.weight'], W[p + 'post_attention_layernorm.weight']
            self.layers.append(m)
        self.norm = W['model.norm.weight']
        inv = 1.0 / (cfg['rope_theta'] ** (torch.arange(0, self.E, 2, dtype=torch.float64) / self.E))
        freqs = torch.outer(torch.arange(4096, dtype=torch.float64), inv)
        emb = torch.cat([freqs, freqs], -1)
        self.cos, self.sin = emb.cos().float(), emb.sin().float()

    def adapters(self, on):
        for m in self.modules():
            if isinstance(m, Lora):
                m.on = on

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg['rms_norm_eps']) * w

    def rope(self, x, pos):
        cos, sin = self.cos[pos], self.sin[pos]
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def hidden(self, ids, start=0, cache=None):
        B, T = ids.shape
        pos = torch.arange(start, start + T)
        x = self.embed[ids]
        new = []
        for i, m in enumerate(self.layers):
            h = self.rms(x, m.ln1)
            q = m.q_proj(h).view(B, T, self.H, self.E).transpose(1, 2)
            k = m.k_proj(h).view(B, T, self.K, self.E).transpose(1, 2)
            v = m.v_proj(h).view(B, T, self.K, self.E).transpose(1, 2)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if cache is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            new.append((k, v))
            g = self.H // self.K
            kk, vv = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
            y = F.scaled_dot_product_attention(q, kk, vv, is_causal=T > 1) if hasattr(F, 'scaled_dot_product_attention') else None
            if y is None:
                att = q @ kk.transpose(-1, -2) / math.sqrt(self.E)
                if T > 1:
                    att = att.masked_fill(~torch.ones(T, kk.shape[2], dtype=torch.bool).tril(diagonal=kk.shape[2] - T), float('-inf'))
                y = att.softmax(-1) @ vv
            x = x + m.o_proj(y.transpose(1, 2).reshape(B, T, -1))
            h = self.rms(x, m.ln2)
            x = x + m.down_proj(F.silu(m.gate_proj(h)) * m.up_proj(h))
        return self.rms(x, self.norm), new


def main():
    o = json.loads(sys.argv[1])
    b = blas()
    torch.set_num_threads(o['threads'])
    torch.manual_seed(1)
    with open(os.path.join(o['dir'], 'config.json')) as f:
        cfg = json.load(f)
    model = Qwen2(cfg, load(o['dir']), 8)
    V = cfg['vocab_size']
    out = {'torch': torch.__version__, 'threads': o['threads'], 'blas': b}
    if 'sample' in o['what']:
        B, P, N = o['sample']
        prompt = torch.randint(0, V, (B, P))
        with torch.no_grad():
            t = time.perf_counter()
            h, cache = model.hidden(prompt)
            nxt = torch.multinomial((h[:, -1] @ model.embed.T).softmax(-1), 1)
            prefill = time.perf_counter() - t
            for s in range(N - 1):
                h, cache = model.hidden(nxt, P + s, cache)
                nxt = torch.multinomial((h[:, -1] @ model.embed.T).softmax(-1), 1)
            total = time.perf_counter() - t
        out['sample'] = {'seconds': total, 'prefill_seconds': prefill, 'tokens_per_s': B * N / total}
    if 'train' in o['what']:
        S, T, P0 = o['sequences'], 1024, 300
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        seqs = [torch.randint(0, V, (1, T + 1)) for _ in range(S)]
        t = time.perf_counter()
        with torch.no_grad():
            model.adapters(False)
            for s in seqs:
                h, _ = model.hidden(s[:, :-1])
                (h[0, P0:] @ model.embed.T).log_softmax(-1)
            model.adapters(True)
        ref = time.perf_counter() - t
        opt.zero_grad()
        for s in seqs:
            h, _ = model.hidden(s[:, :-1])
            logits = h[0, P0:] @ model.embed.T
            (F.cross_entropy(logits, s[0, P0 + 1:]) / S).backward()
        opt.step()
        total = time.perf_counter() - t
        out['train'] = {'seconds': total, 'reference_seconds': ref, 'tokens_per_s': S * T / total}
    print(json.dumps(out))


if __name__ == '__main__':
    main()
