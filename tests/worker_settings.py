"""What the session's shared test worker must share with the test it serves, and how it gets there: a
small JSON file the test process writes before the test and the worker reads before each task
(tests/worker_app.py applies it)."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SETTINGS_FILE_ENV = "MIGRATOR_TEST_WORKER_SETTINGS"


@dataclass(frozen=True)
class WorkerSettings:
    """The settings of the test being served that the worker must share with it."""

    disabled_stages: tuple[str, ...]
    workspace_root: str
    cache_root: str

    @classmethod
    def of(cls, settings: Any) -> WorkerSettings:
        """From the test's settings (pytest-django's ``settings`` fixture or ``django.conf.settings``)."""
        return cls(tuple(settings.MIGRATOR_DISABLED_STAGES), str(settings.MIGRATOR_WORKSPACE_ROOT),
                   str(settings.MIGRATOR_CACHE_ROOT))

    def overrides(self) -> dict[str, object]:
        return {
            "MIGRATOR_DISABLED_STAGES": list(self.disabled_stages),
            "MIGRATOR_WORKSPACE_ROOT": Path(self.workspace_root),
            "MIGRATOR_CACHE_ROOT": Path(self.cache_root),
        }

    def write(self, path: Path) -> None:
        """Replace the file at once, so a reader never sees half of it."""
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(asdict(self)))
        os.replace(partial, path)

    @classmethod
    def read(cls, path: Path) -> WorkerSettings | None:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        return cls(tuple(data["disabled_stages"]), data["workspace_root"], data["cache_root"])
