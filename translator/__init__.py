"""CUDA -> HIP source translation (no Django). See docs/translator.md.

Names are imported lazily so that ``translator.mapping`` loads without the engine.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from translator.account import FileAccount as FileAccount
    from translator.account import TreeAccount as TreeAccount
    from translator.options import TranslateOptions as TranslateOptions
    from translator.source import FileTranslation as FileTranslation
    from translator.source import translate_source as translate_source
    from translator.tree import translate_tree as translate_tree

_EXPORTS = {
    "FileAccount": "translator.account", "TreeAccount": "translator.account",
    "TranslateOptions": "translator.options", "FileTranslation": "translator.source",
    "translate_source": "translator.source", "translate_tree": "translator.tree",
}
__all__ = ["FileAccount", "FileTranslation", "TranslateOptions", "TreeAccount", "translate_source", "translate_tree"]


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'translator' has no attribute {name!r}")
