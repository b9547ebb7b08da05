"""Webhook tests hand a recorded delivery to the worker code in-process, as a worker would."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def deliveries_processed_inline(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("real_broker"):
        return
    from migrator.integrations import actions

    def inline(pk: int) -> bool:
        actions.start_delivery_run(pk)
        return True  # handed over, as a publish to the broker would be

    monkeypatch.setattr(actions, "queue_delivery", inline)
