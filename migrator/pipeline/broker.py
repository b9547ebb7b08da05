"""What the broker holds right now: is it reachable, and which task messages does it still have.

The sweep uses ``pending_task_ids`` to find queued stages whose message is gone (a Redis restart
without persistence, a flushed database) and publishes them again. With the Redis transport a
message waiting in a queue is an entry of the list named after the queue (one list per priority
step); a message a worker has taken but not yet acknowledged (``acks_late``) sits in the
``unacked`` hash until the task ends. Anything in neither place can no longer be delivered.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from kombu.exceptions import OperationalError

from migrator.celery import app

BROKER_CHECK_TIMEOUT_S = 1.0
# Errors that mean "the broker cannot be reached now" (kombu wraps most of them in OperationalError).
BROKER_ERRORS: tuple[type[BaseException], ...] = (OperationalError, ConnectionError, OSError, TimeoutError)


class BrokerUnavailable(Exception):
    """The message broker cannot be reached; nothing was published."""


def broker_reachable(timeout: float = BROKER_CHECK_TIMEOUT_S) -> bool:
    """One quick round trip to the broker (used before accepting work that must be queued)."""
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
            client = getattr(conn.default_channel, "client", None)
            if client is not None:
                client.ping()
    except BROKER_ERRORS:
        return False
    return True


def pending_task_ids(queues: Iterable[str], *, taken_within_s: float | None = None) -> set[str]:
    """Ids of the task messages waiting in ``queues`` or taken but not yet acknowledged.

    With ``taken_within_s``, a taken message counts only if a worker took it that recently: the
    caller knows its task should have started by then, so an older one belongs to a worker that
    died holding it (Redis would give it back only after the visibility timeout, over an hour).
    Raises ``BrokerUnavailable`` when the broker cannot be read (the caller then does nothing).
    """
    try:
        with app.connection_for_read() as conn:
            channel: Any = conn.default_channel
            client = channel.client
            keys = {channel._q_for_pri(queue, step) for queue in set(queues) for step in channel.priority_steps}
            ids = {_message_id(raw) for key in keys for raw in client.lrange(key, 0, -1)}
            ids |= _taken_ids(client, channel, taken_within_s)
    except BROKER_ERRORS as exc:
        raise BrokerUnavailable(str(exc)) from exc
    ids.discard("")
    return ids


def _taken_ids(client: Any, channel: Any, taken_within_s: float | None) -> set[str]:
    if taken_within_s is None:
        return {_unacked_id(raw) for raw in client.hvals(channel.unacked_key)}
    tags = client.zrangebyscore(channel.unacked_index_key, time.time() - taken_within_s, "+inf")
    if not tags:
        return set()
    return {_unacked_id(raw) for raw in client.hmget(channel.unacked_key, tags) if raw is not None}


def _message_id(raw: bytes | str) -> str:
    try:
        message = json.loads(raw)
    except ValueError:
        return ""
    return _id_of(message)


def _unacked_id(raw: bytes | str) -> str:
    try:
        entry = json.loads(raw)  # [message, exchange, routing key]
    except ValueError:
        return ""
    return _id_of(entry[0]) if isinstance(entry, list) and entry else ""


def _id_of(message: object) -> str:
    if not isinstance(message, dict):
        return ""
    headers = message.get("headers")
    if isinstance(headers, dict) and headers.get("id"):
        return str(headers["id"])
    properties = message.get("properties")
    if isinstance(properties, dict) and properties.get("correlation_id"):
        return str(properties["correlation_id"])
    return ""
