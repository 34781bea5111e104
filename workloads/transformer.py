"""A small transformer language model and synthetic token data: the GPU workload's model.

Small on purpose: a few hundred kernels per step, so that several ranks can share one GPU and a
profiled step stays a few hundred KB of trace.
"""

import torch
import torch.nn as nn
from torch.utils.data import Dataset


class TinyTransformer(nn.Module):
    def __init__(self, vocab=4096, d_model=256, heads=4, ffn=1024, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))

    def hook_parameter(self):
        """The weight whose gradient a backward-hook fault hooks (the first layer's FFN)."""
        return self.encoder.layers[0].linear1.weight


class SyntheticTokens(Dataset):
    """Random token sequences; the target is the input shifted by one."""

    def __init__(self, n, seq=128, vocab=4096, delay_s=0.0):
        self.n, self.seq, self.vocab = n, seq, vocab
        self.delay_s = delay_s
        g = torch.Generator().manual_seed(0)
        self.tokens = torch.randint(0, vocab, (n, seq + 1), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay_s:
            import time
            time.sleep(self.delay_s)
        t = self.tokens[i]
        return t[:-1], t[1:]
