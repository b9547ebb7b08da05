"""Once compile has finished, the worker caches the run's diffs so the first reader does not wait."""
from __future__ import annotations

from collections.abc import Callable

from django.core.cache import cache

from migrator.projects.models import Project
from migrator.review.diffcache import diff_key
from migrator.review.tree import review_tree
from tests.conftest import VADD_CU, pipeline_run


def test_the_diffs_are_cached_when_compile_finishes(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch", "scan", "hipify", "compile")
    run = pipeline_run(project, {"src/vadd.cu": VADD_CU, "README.md": "# x\n"})
    assert run.stages.get(name="compile").state == "passed"
    key = diff_key(run, review_tree(run), "src/vadd.cu", full=False)
    cached = cache.get(key)
    assert cached is not None and cached.diff is not None and cached.diff.added > 0
    assert cache.get(diff_key(run, review_tree(run), "README.md", full=False)) is None  # unchanged: not warmed
