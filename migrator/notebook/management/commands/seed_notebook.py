"""Load the error notebook's seed entries (idempotent: safe at every start)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from migrator.notebook.actions import load_seed


class Command(BaseCommand):
    help = "Create or refresh the seed entries of the error notebook."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", default=None, help="a seed YAML file (default: the shipped one)")

    def handle(self, *args: Any, **options: Any) -> None:
        counts = load_seed(options["path"])
        self.stdout.write(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in counts.items()))
