"""Settings find the database ``./dev`` set up (var/db_user, var/db_password, var/db_engine) when the
environment names none, so ``manage.py`` works from a plain shell; the environment always wins."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from migrator.localdb import DbCredentials, database_credentials, database_engine

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MIGRATOR_DB_USER", "MIGRATOR_DB_PASSWORD", "MIGRATOR_DB_PASSWORD_FILE", "MIGRATOR_DB_ENGINE"):
        monkeypatch.delenv(name, raising=False)


def _dev_files(var: Path, **values: str) -> Path:
    var.mkdir(exist_ok=True)
    for name, value in values.items():
        (var / name).write_text(value + "\n")
    return var


def test_without_files_or_environment_it_is_the_local_superuser_without_password(
    plain_env: None, tmp_path: Path
) -> None:
    assert database_credentials(tmp_path) == DbCredentials("postgres", "")
    assert database_engine(tmp_path) == "postgresql"


def test_it_reads_the_role_and_password_dev_generated(plain_env: None, tmp_path: Path) -> None:
    var = _dev_files(tmp_path / "var", db_user="migrator", db_password="s3cret")
    assert database_credentials(var) == DbCredentials("migrator", "s3cret")


def test_a_password_file_from_an_older_dev_means_the_migrator_role(plain_env: None, tmp_path: Path) -> None:
    var = _dev_files(tmp_path / "var", db_password="s3cret")
    assert database_credentials(var) == DbCredentials("migrator", "s3cret")


def test_the_environment_wins_over_the_files(plain_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    var = _dev_files(tmp_path / "var", db_user="migrator", db_password="s3cret", db_engine="sqlite")
    monkeypatch.setenv("MIGRATOR_DB_USER", "app")
    monkeypatch.setenv("MIGRATOR_DB_PASSWORD", "from-env")
    monkeypatch.setenv("MIGRATOR_DB_ENGINE", "postgresql")
    assert database_credentials(var) == DbCredentials("app", "from-env")
    assert database_engine(var) == "postgresql"


def test_another_user_in_the_environment_never_gets_the_dev_roles_password(
    plain_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    var = _dev_files(tmp_path / "var", db_user="migrator", db_password="s3cret")
    monkeypatch.setenv("MIGRATOR_DB_USER", "someone")
    assert database_credentials(var) == DbCredentials("someone", "")
    monkeypatch.setenv("MIGRATOR_DB_USER", "migrator")
    assert database_credentials(var) == DbCredentials("migrator", "s3cret")


def test_the_sqlite_fallback_is_found_and_a_bad_engine_is_refused(
    plain_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    var = _dev_files(tmp_path / "var", db_engine="sqlite")
    assert database_engine(var) == "sqlite"
    monkeypatch.setenv("MIGRATOR_DB_ENGINE", "mysql")
    with pytest.raises(ImproperlyConfigured, match="MIGRATOR_DB_ENGINE must be one of postgresql, sqlite"):
        database_engine(var)


def test_an_unreadable_password_file_is_a_clear_error(plain_env: None, tmp_path: Path) -> None:
    var = _dev_files(tmp_path / "var")
    (var / "db_password").mkdir()  # unreadable as a file, whoever runs the test
    with pytest.raises(ImproperlyConfigured, match="cannot read .*db_password"):
        database_credentials(var)


def test_settings_loaded_from_a_plain_shell_use_the_files(tmp_path: Path) -> None:
    var = _dev_files(tmp_path / "var", db_user="migrator", db_password="s3cret")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIGRATOR_")}
    env.update(MIGRATOR_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="migrator.settings")
    code = "from django.conf import settings as s; d = s.DATABASES['default']; print(d['USER'], d['PASSWORD'])"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["migrator", "s3cret"]
