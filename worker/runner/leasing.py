"""One GPU per smoke job, through ``fcntl.flock`` on ``<lock_dir>/gpu-<index>.lock``.

flock locks belong to the open file, so the kernel drops a lease when its process dies
(a job that crashes the runner frees its GPU) and two opens in one process still exclude
each other (threads work too). A runner with N GPUs runs up to N jobs at once.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from worker.runner.gpus import Gpu

LOCK_DIR_ENV = "MIGRATOR_GPU_LOCK_DIR"
# A variable that narrows the devices before HIP numbers them would shift our indexes.
ROCM_UNSET_VARS = ("ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "CUDA_VISIBLE_DEVICES")
CUDA_UNSET_VARS = ()


class NoGpuError(Exception):
    """There is no device to lease."""


class LeaseTimeout(Exception):
    """Every device stayed busy until the timeout."""


def default_lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "migrator-gpu-locks")


def lock_path(lock_dir: Path, gpu: Gpu) -> Path:
    return Path(lock_dir) / f"gpu-{gpu.index}.lock"


class Lease:
    """A held GPU; use as a context manager or call :meth:`release`."""

    def __init__(self, gpu: Gpu, fd: int, path: Path) -> None:
        self.gpu = gpu
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def env(self) -> dict[str, str]:
        """Variables that pin a child process to the leased device."""
        if self.gpu.vendor == "amd":
            return {"HIP_VISIBLE_DEVICES": str(self.gpu.index)}
        # nvidia-smi numbers devices in PCI order, CUDA by default fastest first.
        return {"CUDA_VISIBLE_DEVICES": str(self.gpu.index), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def unset_vars(self) -> tuple[str, ...]:
        return ROCM_UNSET_VARS if self.gpu.vendor == "amd" else CUDA_UNSET_VARS

    def apply_to(self, base: dict[str, str]) -> dict[str, str]:
        """A copy of ``base`` with the lease's variables set and conflicting ones removed."""
        merged = {k: v for k, v in base.items() if k not in self.unset_vars()}
        merged.update(self.env())
        return merged

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def try_lease(gpu: Gpu, lock_dir: Path) -> Lease | None:
    """The lease of ``gpu`` if nobody holds it, else None; never blocks."""
    path = lock_path(lock_dir, gpu)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    # Who holds it, for people reading the lock directory; the lock itself is the flock.
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return Lease(gpu, fd, path)


def lease_gpu(
    gpus: list[Gpu], lock_dir: Path | str, timeout_s: float, poll_interval_s: float = 0.2
) -> Lease:
    """Take the first free device of ``gpus``, polling until ``timeout_s`` runs out."""
    if not gpus:
        raise NoGpuError("no GPU to lease")
    directory = Path(lock_dir)
    directory.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    while True:
        for gpu in gpus:
            lease = try_lease(gpu, directory)
            if lease is not None:
                return lease
        if time.monotonic() >= deadline:
            raise LeaseTimeout(f"all {len(gpus)} GPU(s) stayed busy for {timeout_s:g} s")
        time.sleep(poll_interval_s)
