"""The database ``./dev`` set up, found again by commands run from a plain shell.

Where PostgreSQL refuses password-less connections (a stock Debian install), ``./dev`` creates a role of its
own with a generated password and keeps both in the var folder (``db_user``, ``db_password``); where
PostgreSQL cannot be had at all it records the SQLite fallback in ``db_engine``. ``./dev`` exports the same
values to what it starts, but ``manage.py`` run by hand only has these files. The environment always wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from migrator.envconf import env_str

ENGINES = ("postgresql", "sqlite")
DEV_ROLE = "migrator"  # the role ./dev creates; older installs kept only its password


@dataclass(frozen=True)
class DbCredentials:
    user: str
    password: str


def read_local(path: Path) -> str:
    """A value ``./dev`` left in the var folder; empty when there is none."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise ImproperlyConfigured(f"cannot read {path} ({exc}); set the matching MIGRATOR_DB_* variable") from exc


def database_engine(var_dir: Path) -> str:
    engine = env_str("MIGRATOR_DB_ENGINE", "") or read_local(var_dir / "db_engine") or "postgresql"
    if engine not in ENGINES:
        raise ImproperlyConfigured(f"MIGRATOR_DB_ENGINE must be one of {', '.join(ENGINES)}, got {engine!r}")
    return engine


def database_credentials(var_dir: Path, default_user: str = "postgres") -> DbCredentials:
    """The environment's user and password; else the role ``./dev`` made, unless the environment names
    another user; else the default user with no password (trust or peer authentication)."""
    env_user = env_str("MIGRATOR_DB_USER", "")
    env_password = env_str("MIGRATOR_DB_PASSWORD", "")
    if env_password:
        return DbCredentials(env_user or default_user, env_password)
    local_password = read_local(var_dir / "db_password")
    if local_password:
        local_user = read_local(var_dir / "db_user") or DEV_ROLE
        if env_user in ("", local_user):
            return DbCredentials(local_user, local_password)
    return DbCredentials(env_user or default_user, "")
