import itertools
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from worker.runner.gpus import parse_fake_gpus
from worker.runner.leasing import (
    LeaseTimeout,
    NoGpuError,
    lease_gpu,
    lock_path,
    try_lease,
)

ROCM_TWO = parse_fake_gpus("gfx90a,gfx90a", "rocm")
CUDA_ONE = parse_fake_gpus("sm_90", "cuda")


def _job(lock_dir: str, log_dir: str, job: int, start: "multiprocessing.synchronize.Barrier") -> None:
    """Lease a device, record entry/exit with timestamps, hold it briefly."""
    start.wait(30)  # all jobs compete at once
    with lease_gpu(ROCM_TWO, lock_dir, timeout_s=60, poll_interval_s=0.02) as lease:
        index = lease.env()["HIP_VISIBLE_DEVICES"]
        log = Path(log_dir, f"job{job}")
        log.write_text(f"{index} {time.monotonic()}")
        time.sleep(0.15)
        log.write_text(log.read_text() + f" {time.monotonic()}")


def test_concurrent_jobs_never_share_a_device(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(6)
    workers = [ctx.Process(target=_job, args=(str(tmp_path / "locks"), str(tmp_path), n, start)) for n in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert all(worker.exitcode == 0 for worker in workers)
    spans = [p.read_text().split() for p in tmp_path.glob("job*")]
    assert len(spans) == 6
    by_device: dict[str, list[tuple[float, float]]] = {}
    for index, began, ended in spans:
        by_device.setdefault(index, []).append((float(began), float(ended)))
    assert set(by_device) == {"0", "1"}  # both devices were used
    for intervals in by_device.values():
        intervals.sort()
        for (_, end), (next_start, _) in itertools.pairwise(intervals):
            assert next_start >= end  # no overlap on one device


def test_threads_in_one_process_also_exclude_each_other(tmp_path: Path) -> None:
    held = [lease_gpu(CUDA_ONE, tmp_path, timeout_s=1)]
    errors: list[Exception] = []

    def second() -> None:
        try:
            lease_gpu(CUDA_ONE, tmp_path, timeout_s=0.3, poll_interval_s=0.05)
        except LeaseTimeout as exc:
            errors.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "busy" in str(errors[0])
    held[0].release()
    with lease_gpu(CUDA_ONE, tmp_path, timeout_s=1) as again:
        assert again.gpu.index == 0


def _hold_forever(lock_dir: str, ready: "multiprocessing.synchronize.Event") -> None:
    lease = lease_gpu(CUDA_ONE, lock_dir, timeout_s=5)
    ready.set()
    time.sleep(300)
    lease.release()


def test_a_killed_holder_frees_its_device(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_forever, args=(str(tmp_path), ready))
    holder.start()
    assert ready.wait(30)
    assert try_lease(CUDA_ONE[0], tmp_path) is None
    assert holder.pid is not None and lock_path(tmp_path, CUDA_ONE[0]).read_text().strip() == str(holder.pid)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(10)
    with lease_gpu(CUDA_ONE, tmp_path, timeout_s=5) as lease:
        assert lease.held


def test_env_pins_the_device_for_each_vendor(tmp_path: Path) -> None:
    with lease_gpu(ROCM_TWO, tmp_path, timeout_s=1) as rocm:
        assert rocm.env() == {"HIP_VISIBLE_DEVICES": "0"}
        env = rocm.apply_to({"ROCR_VISIBLE_DEVICES": "3", "PATH": "/bin"})
        assert env == {"HIP_VISIBLE_DEVICES": "0", "PATH": "/bin"}
        with lease_gpu(ROCM_TWO, tmp_path, timeout_s=1) as other:
            assert other.env() == {"HIP_VISIBLE_DEVICES": "1"}
    with lease_gpu(CUDA_ONE, tmp_path, timeout_s=1) as cuda:
        assert cuda.env()["CUDA_VISIBLE_DEVICES"] == "0"


def test_leasing_from_no_devices_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(NoGpuError):
        lease_gpu([], tmp_path, timeout_s=10)
