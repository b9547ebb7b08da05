"""The host API policy from settings, and the form/model check of an integration's ``host_api_url``."""
from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.exceptions import ValidationError

from worker.sources.hostguard import HostPolicy, HostRefused


def host_policy() -> HostPolicy:
    return HostPolicy.build(settings.MIGRATOR_ALLOWED_HOST_API_BASES, settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS)


def validate_host_api_url(value: str) -> None:
    """Only configured API bases; an address written as the host must be one the worker may call.

    Names are resolved when a request is sent (they may change after saving), not here.
    """
    if not value:
        return
    policy = host_policy()
    try:
        host, _port = policy.check_url(value)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return
        policy.check_address(host, host)
    except HostRefused as exc:
        raise ValidationError(f"host API URL refused: {exc}") from exc
