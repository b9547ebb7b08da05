"""State changes for users and teams, shared by the admin, commands and tests."""
from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.text import slugify

from migrator.accounts.models import Membership, Team


@transaction.atomic
def create_user_and_team(
    username: str, password: str, team_name: str, *, email: str = "", superuser: bool = False
) -> tuple[User, Team, bool]:
    """Create (or update the password of) a user and make them owner of a team. Returns created flag."""
    user, created = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    if superuser:
        user.is_staff = True
        user.is_superuser = True
    user.save()
    team, _ = ensure_team(team_name)
    Membership.objects.update_or_create(team=team, user=user, defaults={"role": Membership.Role.OWNER})
    return user, team, created


def add_member(team: Team, user: User, role: str = Membership.Role.MEMBER) -> Membership:
    membership, _ = Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
    return membership


def ensure_team(name: str) -> tuple[Team, bool]:
    """The team of that name, created when missing. Returns the created flag."""
    return Team.objects.get_or_create(name=name, defaults={"slug": slugify(name) or "team"})
