"""An OpenAI-compatible server whose model runs on the GPU, for the llm-serve preset's CUDA reference run.

It reuses the test suite's small HTTP server (copied beside it) (health, /v1/models, streamed /v1/completions) and replaces
its answer with greedy decoding from a small seeded transformer on the GPU: each new token is one forward
pass over the context so far, so time to first token and tokens/s measure real GPU work.
Usage: serve_gpu.py PORT [the test server's options]
"""
from __future__ import annotations

import openai_server  # the test suite's server, copied beside this file into the workspace
import torch

VOCAB, WIDTH = 4096, 512
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
_LAYER = torch.nn.TransformerEncoderLayer(WIDTH, nhead=8, dim_feedforward=4 * WIDTH, batch_first=True)
MODEL = torch.nn.Sequential(torch.nn.Embedding(VOCAB, WIDTH), torch.nn.TransformerEncoder(_LAYER, 4),
                            torch.nn.Linear(WIDTH, VOCAB)).to(DEVICE).eval()


@torch.inference_mode()
def gpu_tokens_for(prompt: str, limit: int, suffix: str) -> list[str]:
    context = [sum(map(ord, word)) % VOCAB for word in prompt.split()] or [0]
    out: list[str] = []
    for _ in range(limit):
        logits = MODEL(torch.tensor([context], device=DEVICE))[0, -1]
        token = int(torch.argmax(logits))
        context.append(token)
        out.append(f" t{token}")
    return out


openai_server.tokens_for = gpu_tokens_for

if __name__ == "__main__":
    openai_server.main()
