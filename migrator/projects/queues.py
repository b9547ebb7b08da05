"""Which Celery queues belong to ROCm runners: the plain ``rocm`` queue and each ``rocm.<gfx target>``.

The question is asked of one stage in Python (the run page's "waiting for a ROCm runner") and of
many in SQL (the runners page's count, the sweep's check for stages no runner can take). Both
answers come from the one prefix rule here, so the page and the sweep can never disagree; a bare
``startswith("rocm")`` would also take a queue such as ``rocmx`` for a runner's.
"""
from __future__ import annotations

from django.db.models import Q

from migrator.projects.constants import ROCM_QUEUE

_TARGET_PREFIX = f"{ROCM_QUEUE}."


def is_rocm_queue(name: str) -> bool:
    return name == ROCM_QUEUE or name.startswith(_TARGET_PREFIX)


def rocm_target_queue(arch: str) -> str:
    """The queue of runners owning a GPU of the gfx target ``arch`` (``rocm.gfx90a``)."""
    return f"{_TARGET_PREFIX}{arch}"


def rocm_queues() -> Q:
    """The same rule as `is_rocm_queue`, as a filter on ``Stage.queue``."""
    return Q(queue=ROCM_QUEUE) | Q(queue__startswith=_TARGET_PREFIX)
