"""A small PyTorch training loop for the train-steps preset's tests (runs on the CPU).

Usage: train_loop.py STEPS [--nan-at STEP] [--scale FACTOR]
Prints one line per step: loss, step time and tokens/s, like a fine-tuning script's log.
"""
from __future__ import annotations

import argparse
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("steps", type=int)
    parser.add_argument("--nan-at", type=int, default=-1)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the loss (a drifting port)")
    args = parser.parse_args()
    torch.manual_seed(0)
    inputs = torch.randn(256, 16)
    targets = inputs @ torch.randn(16, 1) + 0.1 * torch.randn(256, 1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        started = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(inputs), targets) * args.scale
        if step == args.nan_at:
            loss = loss * float("nan")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - started
        print(f"step {step} loss {loss.item():.6f} step_time {elapsed * 1000:.3f} ms tokens/s "
              f"{inputs.shape[0] * 16 / elapsed:.1f}", flush=True)


if __name__ == "__main__":
    main()
