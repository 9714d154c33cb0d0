#!/usr/bin/env python3
"""The transformer benchmark's PyTorch side: the same GPT (pre-norm blocks, fused QKV, causal attention,
tanh-GELU MLP, tied head, learned positions) and the same workloads as bench/transformer.ts.

Usage: python3 torch_gpt.py '<json: {"models": [...], "threads": N, "rounds": R}>'
Prints one JSON line: per model, median training tokens/s and sampling tokens/s at that thread count.
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

WARMUP = 2  # untimed rounds before the timed ones, as in the tfjs measurements


class Block(torch.nn.Module):
    def __init__(self, d, h, mlp):
        super().__init__()
        self.h = h
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, mlp * d)
        self.fc2 = torch.nn.Linear(mlp * d, d)

    def forward(self, x, past=None):
        b, t, d = x.shape
        e = d // self.h
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, e).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        tk = k.shape[2]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(e)
        if t > 1:
            mask = torch.ones(t, tk, dtype=torch.bool).tril(diagonal=tk - t)
            att = att.masked_fill(~mask, float('-inf'))
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate='tanh'))
        return x, (k, v)


class Gpt(torch.nn.Module):
    def __init__(self, vocab, ctx, d, layers, heads, mlp=4):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, d)
        self.wpe = torch.nn.Embedding(ctx, d)
        self.blocks = torch.nn.ModuleList([Block(d, heads, mlp) for _ in range(layers)])
        self.lnf = torch.nn.LayerNorm(d)

    def forward(self, ids, start=0, cache=None):
        pos = torch.arange(start, start + ids.shape[1])
        x = self.wte(ids) + self.wpe(pos)[None]
        new = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, cache[i] if cache is not None else None)
            new.append(kv)
        return self.lnf(x) @ self.wte.weight.t(), new


def train_rate(m, cfg, rounds):
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.0)
    ids = torch.randint(0, cfg['vocab'], (cfg['trainBatch'], cfg['trainLength']))

    def step():
        logits, _ = m(ids)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, cfg['vocab']), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    for _ in range(WARMUP):
        step()
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        step()
        rates.append(cfg['trainBatch'] * cfg['trainLength'] / (time.perf_counter() - t0))
    return statistics.median(rates)


@torch.no_grad()
def sample_rate(m, cfg, rounds):
    def run():
        ids = torch.randint(0, cfg['vocab'], (cfg['sampleBatch'], cfg['promptLength']))
        logits, cache = m(ids)
        pos = cfg['promptLength']
        for _ in range(cfg['newTokens']):
            nxt = torch.multinomial(logits[:, -1].softmax(-1), 1)
            logits, cache = m(nxt, pos, cache)
            pos += 1

    for _ in range(WARMUP):
        run()
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        run()
        rates.append(cfg['sampleBatch'] * cfg['newTokens'] / (time.perf_counter() - t0))
    return statistics.median(rates)


def main():
    args = json.loads(sys.argv[1])
    torch.set_num_threads(args['threads'])
    torch.manual_seed(0)
    out = {'torch': torch.__version__, 'threads': torch.get_num_threads(), 'models': {}}
    for cfg in args['models']:
        m = Gpt(cfg['vocab'], cfg['context'], cfg['dModel'], cfg['nLayers'], cfg['nHeads'])
        out['models'][cfg['name']] = {
            'params': sum(p.numel() for p in m.parameters()),
            'train': train_rate(m, cfg, args['rounds']),
            'sample': sample_rate(m.eval(), cfg, args['rounds']),
        }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
