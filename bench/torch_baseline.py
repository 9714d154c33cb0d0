#!/usr/bin/python3
"""The PyTorch baseline of the benches (bench/seed000Scale.ts at Qwen2.5-0.5B's shapes, bench/hfModel.ts on
the qwen2 fixture), written as a strong engineer would write it on the PyTorch that runs it (Debian's
1.13, or 2.15 from PyPI: bench/torchServer.ts picks the interpreter), a Qwen2-family decoder read from
the checkpoint's safetensors:

- the weights held in the dtype the server computes in: float32 (OpenBLAS on Debian's build, MKL on
  PyPI's) or bfloat16 (oneDNN; a bfloat16 checkpoint's weights kept bfloat16, never expanded), LoRA
  rank 8 on every linear layer (alpha 16, float32 parameters; bfloat16 runs under autocast);
- or int8 ("dtype": "int8", sampling and the base model's top-5 only: quantized modules have no
  backward): `torch.ao.quantization.quantize_dynamic` over the linear layers, the output head too (the
  frozen base quantized once at load, per-tensor int8 weights, activations quantized per product), on
  the fastest of the quantized engines fbgemm / onednn / x86 that this build has (probed at start on a
  [512, 896] × [896, 4864] product); the LoRA adapters beside the int8 base in float32, unmerged (as
  QLoRA: merging would mean quantizing the weights again after every step); embeddings float32;
- attention: PyTorch's fused F.scaled_dot_product_attention (grouped-query by enable_gqa) where it
  has it (2.5 on), else two products with the query heads of a key/value head stacked along the rows;
- sampling: the adapters merged into a copy of the weights (one product per linear layer, no autocast),
  a KV cache preallocated once per batch and written in place, grouped-query attention without copying
  K and V per query head (the query heads of a key/value head stacked along the rows), one causal mask
  per prompt length, the head only at the last position, each token drawn by the inverse cumulative
  distribution, inference mode;
- training: the reference pass (the base model, no gradient) and the policy's forward and backward over
  S sequences (positions from `trained from` on trained, the head only there) in micro-batches ("micro",
  default 2: what fits), then AdamW;
- one thread count for PyTorch's own threads and OpenBLAS's (the caller sets OPENBLAS_NUM_THREADS and
  OMP_NUM_THREADS to it), and a warm-up of both workloads first. (jemalloc in place of glibc's allocator
  was tried here, preloaded: no faster at sampling or training, so the bench leaves the default.)

It is a server (bench/torchServer.ts drives it), so a bench can interleave it with our side (A B A B …)
without paying the load and warm-up each time: it prints one JSON line when ready (versions, BLAS, a
probe: the GFLOP/s of a 512² and a 1,024² product in its dtype at its thread count; for int8 a dynamic
int8 Linear on as many rows, and each quantized engine's GFLOP/s at 12 and 512 rows), then reads
commands from stdin, one a line: "sample", "train" or "top5 [ids…]" (the base model's five likeliest
next tokens), and answers each with one JSON line (seconds; prefill and decoding apart; the reference
pass apart); "quit" (or the end of stdin) ends it.

Usage: python3 torch_baseline.py '<json: {"dir": ..., "threads": N, "dtype": "float32"|"bfloat16"|"int8",
                                                  "sequences": S, "micro": M, "train": [T, trained from],
                                                  "sample": [B, P, N]}>'
"""
import ctypes
import gc
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F



def blas_library():
    # PyPI's build links MKL into libtorch_cpu (what is mapped beside it is numpy's OpenBLAS and the
    # CUDA libraries): its build configuration names it
    if 'BLAS_INFO=mkl' in torch.__config__.show():
        return 'MKL, linked into libtorch_cpu (BLAS_INFO=mkl)'
    try:
        with open('/proc/self/maps') as f:
            libs = {line.split()[-1] for line in f if 'blas' in line.lower() and line.split()[-1].startswith('/')}
        return ', '.join(sorted(os.path.realpath(x) for x in libs)) or 'none mapped'
    except OSError:
        return 'unknown'


SDPA = hasattr(F, 'scaled_dot_product_attention') and tuple(int(x) for x in torch.__version__.split('.')[:2]) >= (2, 5)
INT8_ENGINES = ('fbgemm', 'onednn', 'x86')


def quantized(linear):
    """nn.Linear → its dynamic int8 module on the current quantized engine."""
    box = torch.nn.Sequential(linear)
    return torch.ao.quantization.quantize_dynamic(box, {torch.nn.Linear}, dtype=torch.qint8)[0]


def int8_gflops(rows, n_in, n_out):
    """GFLOP/s of a dynamic int8 Linear(n_in, n_out) on `rows` rows (best of 3 quarter-second windows)."""
    q = quantized(torch.nn.Linear(n_in, n_out, bias=False))
    x = torch.randn(rows, n_in)
    with torch.inference_mode():
        for _ in range(3):
            q(x)
        best = 0.0
        for _ in range(3):
            t, k = time.perf_counter(), 0
            while time.perf_counter() - t < 0.25:
                q(x)
                k += 1
            best = max(best, 2 * rows * n_in * n_out * k / (time.perf_counter() - t) / 1e9)
    return best


def pick_int8_engine():
    """The quantized engine (of those this build has) fastest on a [512, 896] × [896, 4864] product,
    where int8 can win (prefill, the reference pass); each one's GFLOP/s at 12 and 512 rows."""
    seen = {}
    for e in INT8_ENGINES:
        if e not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = e
        seen[e] = {'12': int8_gflops(12, 896, 4864), '512': int8_gflops(512, 896, 4864)}
    best = max(seen, key=lambda e: seen[e]['512'])
    torch.backends.quantized.engine = best
    return best, seen


def cpu_has(flag):
    try:
        with open('/proc/cpuinfo') as f:
            return any(flag in line.split() for line in f if line.startswith('flags'))
    except OSError:
        return False


def probe(dtype, n):
    """GFLOP/s of an n × n × n product in dtype on the threads set (best of 5 half-second windows)."""
    if dtype == 'int8':
        return int8_gflops(n, n, n)
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    for _ in range(5):
        a @ b
    best = 0.0
    for _ in range(5):
        t, k = time.perf_counter(), 0
        while time.perf_counter() - t < 0.5:
            a @ b
            k += 1
        best = max(best, 2 * n ** 3 * k / (time.perf_counter() - t) / 1e9)
    return best


def load(dirname, dtype):
    with open(os.path.join(dirname, 'model.safetensors'), 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == '__metadata__':
            continue
        b, end = e['data_offsets']
        if e['dtype'] == 'BF16':
            raw = torch.from_numpy(np.frombuffer(data[b:end], dtype=np.int16).copy()).view(torch.bfloat16)
        else:
            raw = torch.from_numpy(np.frombuffer(data[b:end], dtype={'F32': np.float32}[e['dtype']]).copy())
        out[name] = raw.view(*e['shape']).to(dtype)
    return out


class Lora(torch.nn.Module):
    def __init__(self, w, b, rank):
        super().__init__()
        self.w, self.b = w, b
        bound = 1 / math.sqrt(w.shape[1])
        self.a = torch.nn.Parameter(torch.empty(rank, w.shape[1]).uniform_(-bound, bound))
        self.bb = torch.nn.Parameter(torch.zeros(w.shape[0], rank))
        self.scale = 2.0
        self.on = True

        self.merged = None
        self.q = None

    def quantize(self):
        """int8: the frozen base as a dynamic int8 Linear (the float weight dropped)."""
        lin = torch.nn.Linear(self.w.shape[1], self.w.shape[0], bias=self.b is not None)
        with torch.no_grad():
            lin.weight.copy_(self.w)
            if self.b is not None:
                lin.bias.copy_(self.b)
        self.q, self.w, self.b = quantized(lin), None, None

    def merge(self, on):
        """Sampling: the adapters folded into a copy of the weight (one product per layer, no autocast);
        an int8 base keeps them beside it."""
        if self.q is not None:
            return
        with torch.no_grad():
            self.merged = torch.addmm(self.w, self.bb.to(self.w.dtype), self.a.to(self.w.dtype), alpha=self.scale) if on else None

    def forward(self, x):
        if self.merged is not None:
            return F.linear(x, self.merged, self.b)
        y = self.q(x) if self.q is not None else F.linear(x, self.w, self.b)
        return y + F.linear(F.linear(x, self.a), self.bb) * self.scale if self.on else y


class Qwen2(torch.nn.Module):
    def __init__(self, cfg, W, rank, dtype):
        super().__init__()
        self.cfg, self.dtype = cfg, dtype
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
        self.cos, self.sin = emb.cos().to(dtype), emb.sin().to(dtype)
        self.masks = {}
        self.qhead = None

    def quantize(self):
        """int8: every linear layer's base and the (tied) output head as dynamic int8 modules."""
        for m in list(self.modules()):
            if isinstance(m, Lora):
                m.quantize()
        head = torch.nn.Linear(self.embed.shape[1], self.embed.shape[0], bias=False)
        with torch.no_grad():
            head.weight.copy_(self.embed)
        self.qhead = quantized(head)

    def head(self, h):
        """Logits of hidden states h [..., D] → [..., V] (the head tied to the embedding)."""
        return self.qhead(h.float()) if self.qhead is not None else h @ self.embed.T

    def adapters(self, on):
        for m in self.modules():
            if isinstance(m, Lora):
                m.on = on

    def rms(self, x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg['rms_norm_eps'])).to(w.dtype) * w

    def rope(self, x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def mask(self, T):
        """The additive causal mask of a T-token block, made once per length."""
        m = self.masks.get(T)
        if m is None:
            m = torch.full((T, T), float('-inf')).triu(1).to(self.dtype)
            self.masks[T] = m
        return m

    def hidden(self, ids, start=0, cache=None):
        """Final hidden states of ids [B, T] at positions start …; with a cache (per layer: K, V
        [B, KV heads, capacity, E]) the new keys and values are written into it in place and attention
        reads the cache up to start + T (a block from 0 with T > 1 is causal)."""
        B, T = ids.shape
        H, K, E = self.H, self.K, self.E
        g = H // K
        cos, sin = self.cos[start:start + T], self.sin[start:start + T]
        x = self.embed[ids]
        scale = 1 / math.sqrt(E)
        for i, m in enumerate(self.layers):
            h = self.rms(x, m.ln1)
            q = self.rope(m.q_proj(h).view(B, T, H, E).transpose(1, 2), cos, sin)
            k = self.rope(m.k_proj(h).view(B, T, K, E).transpose(1, 2), cos, sin)
            v = m.v_proj(h).view(B, T, K, E).transpose(1, 2)
            if cache is not None:
                ck, cv = cache[i]
                ck[:, :, start:start + T] = k
                cv[:, :, start:start + T] = v
                k, v = ck[:, :, :start + T], cv[:, :, :start + T]
            if SDPA and (T == 1 or start == 0):
                # PyTorch's fused attention (flash attention on the CPU): causal within a block from 0,
                # a single new position attends the whole cache
                y = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1, enable_gqa=True)
            else:
                # grouped-query attention without copying K or V per query head: the g query heads of a
                # key/value head are stacked along the rows, [B, K, g·T, E] · [B, K, E, S]
                att = (q.reshape(B, K, g * T, E) @ k.transpose(-1, -2)) * scale
                if T > 1:
                    att = (att.view(B, K, g, T, -1) + self.mask(T)).view(B, K, g * T, -1)
                y = att.float().softmax(-1).to(v.dtype) @ v
            x = x + m.o_proj(y.view(B, H, T, E).transpose(1, 2).reshape(B, T, H * E))
            h = self.rms(x, m.ln2)
            x = x + m.down_proj(F.silu(m.gate_proj(h)) * m.up_proj(h))
        return self.rms(x, self.norm)

    def merge(self, on):
        for m in self.modules():
            if isinstance(m, Lora):
                m.merge(on)

    def autocast(self):
        return torch.autocast('cpu', dtype=torch.bfloat16, enabled=self.dtype == torch.bfloat16)


def draw(logits):
    """One token per row from softmax(logits) (float32): the inverse of the cumulative distribution at a
    uniform draw (torch.multinomial draws an exponential per vocabulary entry)."""
    c = logits.float().softmax(-1).cumsum(-1)
    u = torch.rand(c.shape[0], 1) * c[:, -1:]
    return torch.searchsorted(c, u).clamp_(max=c.shape[-1] - 1)


def sample(model, V, B, P, N):
    """B rows × N new tokens from P-token prompts at temperature 1; seconds in all and of the prefill
    (the adapters merged into the weights, the prompt's pass and the first draw)."""
    prompt = torch.randint(0, V, (B, P))
    cap = P + N
    with torch.inference_mode():
        t = time.perf_counter()
        model.merge(True)
        cache = [(torch.empty(B, model.K, cap, model.E, dtype=model.dtype), torch.empty(B, model.K, cap, model.E, dtype=model.dtype))
                 for _ in model.layers]
        h = model.hidden(prompt, 0, cache)
        nxt = draw(model.head(h[:, -1]))
        prefill = time.perf_counter() - t
        for s in range(N - 1):
            h = model.hidden(nxt, P + s, cache)
            nxt = draw(model.head(h[:, -1]))
        total = time.perf_counter() - t
        model.merge(False)
    return {'seconds': total, 'prefill_seconds': prefill, 'decode_seconds': total - prefill, 'tokens': B * N}


def train(model, opt, V, S, T, trained_from, micro):
    """The reference pass, then the policy's forward, backward and AdamW over S sequences of T tokens."""
    seqs = torch.randint(0, V, (S, T + 1))
    t = time.perf_counter()
    with torch.inference_mode(), model.autocast():
        model.adapters(False)
        for b in range(0, S, micro):
            s = seqs[b:b + micro]
            h = model.hidden(s[:, :-1])
            (h[:, trained_from:] @ model.embed.T).float().log_softmax(-1).gather(-1, s[:, trained_from + 1:, None])
        model.adapters(True)
    ref = time.perf_counter() - t
    opt.zero_grad(set_to_none=True)
    for b in range(0, S, micro):
        s = seqs[b:b + micro]
        with model.autocast():
            h = model.hidden(s[:, :-1])
            logits = (h[:, trained_from:] @ model.embed.T).float()
        (F.cross_entropy(logits.reshape(-1, V), s[:, trained_from + 1:].reshape(-1)) * (s.shape[0] / S)).backward()
    opt.step()
    total = time.perf_counter() - t
    return {'seconds': total, 'reference_seconds': ref, 'tokens': S * T}


def main():
    o = json.loads(sys.argv[1])
    threads = o['threads']
    int8 = o['dtype'] == 'int8'
    dtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'int8': torch.float32}[o['dtype']]
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    with open(os.path.join(o['dir'], 'config.json')) as f:
        cfg = json.load(f)
    engine, engines = pick_int8_engine() if int8 else (None, None)
    model = Qwen2(cfg, load(o['dir'], dtype), 8, dtype)
    if int8:
        model.quantize()
        gc.collect()
    V = cfg['vocab_size']
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    B, P, N = o['sample']
    S = o['sequences']
    micro = o.get('micro', 2)
    ready = {
        'torch': torch.__version__, 'threads': torch.get_num_threads(), 'dtype': o['dtype'],
        'blas': blas_library(), 'cpu_bf16': cpu_has('avx512_bf16'),
        'attention': 'scaled_dot_product_attention' if SDPA else 'two products',
        'probe': {'512': probe('int8' if int8 else dtype, 512), '1024': probe('int8' if int8 else dtype, 1024)},
    }
    if int8:
        ready.update(int8_engine=engine, int8_engines=engines)
    # warm-up: both workloads at their batch shapes, shorter (int8: sampling only)
    sample(model, V, B, P, 4)
    if not int8:
        train(model, opt, V, min(S, micro), 128, 64, micro)
    print(json.dumps(ready), flush=True)
    libc = ctypes.CDLL('libc.so.6')
    for line in sys.stdin:
        # what the last command freed goes back to the system (glibc keeps it, and a bench runs several
        # servers beside the engine): after the answer, never inside a timed region
        gc.collect()
        libc.malloc_trim(0)
        cmd = line.strip()
        if cmd == 'quit':
            break
        if cmd == 'sample':
            print(json.dumps(sample(model, V, B, P, N)), flush=True)
        elif cmd == 'train' and int8:
            print(json.dumps({'error': 'int8 has no training pass: dynamic quantized modules have no backward'}), flush=True)
        elif cmd == 'train':
            print(json.dumps(train(model, opt, V, S, *o['train'], micro)), flush=True)
        elif cmd.startswith('top5 '):
            # the base model's five most likely next tokens after the given ids
            ids = torch.tensor([json.loads(cmd[5:])])
            with torch.inference_mode(), model.autocast():
                model.adapters(False)
                h = model.hidden(ids)
                model.adapters(True)
                top = model.head(h[0, -1:])[0].float().topk(5).indices.tolist()
            print(json.dumps({'top5': top}), flush=True)
        else:
            print(json.dumps({'error': f'unknown command {cmd!r}'}), flush=True)


if __name__ == '__main__':
    main()
