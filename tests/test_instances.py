"""Two instances on one machine, set up as the README says: each needs only its own MIGRATOR_REDIS_URL and
MIGRATOR_BIND; the broker, the cache (and with it sign-in throttling) and the public URL follow them."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.envconf import public_url_from_bind, redis_url_next_db, split_bind
from tests.brokerhost import RedisServer, free_port
from tests.conftest import ALICE_PASSWORD

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_PRINT = ("from django.conf import settings as s; from migrator.reports.links import absolute_url; "
                  "print(s.CELERY_BROKER_URL, s.CACHES['default']['LOCATION'], s.CACHES['throttle']['LOCATION'], "
                  "absolute_url('/runs/1/report'))")


@pytest.mark.parametrize(("base", "cache"), [
    ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/1"),
    ("redis://127.0.0.1:6380", "redis://127.0.0.1:6380/1"),
    ("redis://:secret@cache.internal:6379/4", "redis://:secret@cache.internal:6379/5"),
])
def test_the_cache_takes_the_database_after_the_redis_base(base: str, cache: str) -> None:
    assert redis_url_next_db(base) == cache


@pytest.mark.parametrize("base", ["http://127.0.0.1:6379/0", "redis://127.0.0.1:6379/x", "redis://h:1/15"])
def test_a_redis_base_it_cannot_follow_stops_start_up(base: str) -> None:
    with pytest.raises(ImproperlyConfigured):
        redis_url_next_db(base)


@pytest.mark.parametrize(("bind", "url"), [
    ("127.0.0.1:8021", "http://localhost:8021"),
    ("[::1]:8000", "http://localhost:8000"),
    ("10.1.2.3:8000", "http://10.1.2.3:8000"),
])
def test_the_public_url_follows_the_bind_address(bind: str, url: str) -> None:
    assert public_url_from_bind(bind) == url


def test_a_bind_that_is_not_host_and_port_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured):
        split_bind("8000")


def _instance_env(redis_base: str, bind: str, var: Path, db_name: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("MIGRATOR_") or key in ("MIGRATOR_DB_USER", "MIGRATOR_DB_PASSWORD")}
    return {**env, "DJANGO_SETTINGS_MODULE": "migrator.settings", "MIGRATOR_REDIS_URL": redis_base,
            "MIGRATOR_BIND": bind, "MIGRATOR_VAR_DIR": str(var), "MIGRATOR_DB_NAME": db_name,
            "MIGRATOR_SECRET_KEY": "instance-test-key", "PYTHONUNBUFFERED": "1"}


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.kill()


def _serve(env: dict[str, str], bind: str) -> subprocess.Popen[bytes]:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    proc = subprocess.Popen([gunicorn, "migrator.wsgi", "-b", bind, "-w", "1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://{bind}/login/", timeout=2)
            return proc
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"gunicorn on {bind} did not start")


def _sign_in(base: str, password: str) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=10) as client:
        page = client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        return client.post("/login/", data={"username": "alice", "password": password,
                                            "csrfmiddlewaretoken": token.group(1)}, headers={"Referer": f"{base}/login/"})


@pytest.mark.django_db(transaction=True)
def test_two_instances_side_by_side_share_neither_cache_nor_links(
    own_redis: RedisServer, team_user: tuple[User, Team], tmp_path: Path, settings: Settings
) -> None:
    from django.db import connection

    # The instances run with the production settings, whose password hashers the test settings leave out.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    team_user[0].set_password(ALICE_PASSWORD)
    team_user[0].save()
    db_name = str(connection.settings_dict["NAME"])
    port = own_redis.port
    binds = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    envs = [_instance_env(f"redis://127.0.0.1:{port}/{base}", bind, tmp_path / f"var{n}", db_name)
            for n, (base, bind) in enumerate(zip((2, 4), binds, strict=True))]
    printed = [_manage(env, "shell", "--no-imports", "-c", SETTINGS_PRINT) for env in envs]
    assert [p.returncode for p in printed] == [0, 0], [p.stderr for p in printed]
    first, second = (p.stdout.split() for p in printed)
    assert first == [f"redis://127.0.0.1:{port}/2", f"redis://127.0.0.1:{port}/3", f"redis://127.0.0.1:{port}/3",
                     f"http://localhost:{binds[0].split(':')[1]}/runs/1/report"]
    assert second == [f"redis://127.0.0.1:{port}/4", f"redis://127.0.0.1:{port}/5", f"redis://127.0.0.1:{port}/5",
                      f"http://localhost:{binds[1].split(':')[1]}/runs/1/report"]

    servers = [_serve(env, bind) for env, bind in zip(envs, binds, strict=True)]
    try:
        for _ in range(6):  # the first instance backs alice off
            _sign_in(f"http://{binds[0]}", "wrong")
        counts = [redis.Redis(port=port, db=db).dbsize() for db in (3, 5)]
        assert counts[0] > 0 and counts[1] == 0  # the failures were counted in the first instance's cache only
        answer = _sign_in(f"http://{binds[1]}", ALICE_PASSWORD)
        assert answer.status_code == 302 and answer.headers["location"] == "/"
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=10)


def test_an_unset_public_url_behind_a_wide_bind_warns_at_start(tmp_path: Path) -> None:
    env = _instance_env("redis://127.0.0.1:6379/0", "0.0.0.0:8021", tmp_path / "var", "migrator")
    checked = _manage(env, "check")
    assert "migrator.W001" in checked.stderr + checked.stdout
    assert "MIGRATOR_PUBLIC_URL" in checked.stderr + checked.stdout
    quiet = _manage({**env, "MIGRATOR_BIND": "127.0.0.1:8021"}, "check")
    assert "migrator.W001" not in quiet.stderr + quiet.stdout
