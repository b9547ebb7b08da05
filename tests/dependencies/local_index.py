"""A local index holding every package the fine-tuning fixture declares (PyPI's side and PyTorch's ROCm index)."""
from __future__ import annotations

from tests.pytorch_projects.simple_index import SimpleIndex
from tests.pytorch_projects.wheels import make_sdist

PORTABLE = ("transformers==4.51.1", "transformers==4.57.1", "accelerate==1.11.0", "peft==0.18.1", "pyyaml==6.0.2",
            "nltk==3.9.1", "rouge-chinese==1.0.3", "pytest==8.3.4", "ruff==0.8.4", "setuptools==75.6.0",
            "bitsandbytes==0.50.2", "filelock==3.16.1", "numpy==2.1.0")


def fill(index: SimpleIndex) -> None:
    """PyPI's side (CUDA torch pulling NVIDIA wheels and triton) and PyTorch's ROCm index."""
    index.add("pypi", "torch", "2.14.1", ("nvidia-cublas-cu12==12.8.4.1", "triton==3.8.0", "filelock"))
    index.add("pypi", "nvidia-cublas-cu12", "12.8.4.1")
    index.add("pypi", "triton", "3.8.0")
    index.add("pypi", "liger-kernel", "0.6.3", ("torch>=2.1.2", "triton>=2.3.1"))
    for spec in PORTABLE:
        name, version = spec.split("==")
        index.add("pypi", name, version)
    make_sdist(index.root / "pypi", "deepspeed", "0.18.4")  # PyPI has DeepSpeed as a source archive only
    for torch, vision, audio in (("2.14.1", "0.29.1", ""), ("2.11.0", "0.26.0", "2.11.0")):
        index.add("rocm", "torch", f"{torch}+rocm7.2", ("triton-rocm==3.8.0", "filelock"))
        index.add("rocm", "torchvision", f"{vision}+rocm7.2", (f"torch=={torch}",))
        if audio:
            index.add("rocm", "torchaudio", f"{audio}+rocm7.2", (f"torch=={torch}",))
    index.add("rocm", "triton-rocm", "3.8.0")
    index.add("rocm", "filelock", "3.16.1")
