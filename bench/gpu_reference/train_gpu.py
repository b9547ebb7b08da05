"""A small language-model training loop for the train-steps preset's CUDA reference run.

Trains a two-layer transformer encoder on a fixed synthetic token stream (seeded) on the GPU when one is
visible, else on the CPU. Prints one line per step in the form fine-tuning scripts use:
``step N loss X step_time Y s tokens/s Z``. Usage: train_gpu.py STEPS
"""
from __future__ import annotations

import sys
import time

import torch

VOCAB, WIDTH, CONTEXT, BATCH = 512, 256, 128, 32


def main() -> None:
    steps = int(sys.argv[1])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(WIDTH, nhead=4, dim_feedforward=4 * WIDTH, batch_first=True)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, WIDTH), torch.nn.TransformerEncoder(layer, 2),
                                torch.nn.Linear(WIDTH, VOCAB)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    stream = torch.randint(0, VOCAB, (BATCH, CONTEXT + 1), generator=torch.Generator().manual_seed(1)).to(device)
    print(f"device {device} {torch.cuda.get_device_name(0) if device == 'cuda' else ''}", flush=True)
    for step in range(steps):
        started = time.perf_counter()
        logits = model(stream[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), stream[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        took = time.perf_counter() - started
        print(f"step {step} loss {loss.item():.5f} step_time {took:.4f} s tokens/s {BATCH * CONTEXT / took:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
