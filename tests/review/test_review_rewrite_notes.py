"""The translator's rewrites reach the diff margin with their rule id, on the side the account names."""
from __future__ import annotations

from migrator.review.annotations import KIND_REWRITE, translation_notes
from translator import translate_source


def test_rewrites_become_margin_notes_with_their_rule_id() -> None:
    source = ("#include <cuda_runtime.h>\n"
              "__global__ void k(const float* in, float* out) {\n"
              "  __stcs(out + threadIdx.x, __ldcs(in + threadIdx.x));\n"
              "}\n")
    entry = translate_source(source, "k.cu").account.to_dict()
    entry["path"] = "k.cu"
    notes = [n for n in translation_notes([entry], "k.cu") if n.kind == KIND_REWRITE]
    assert [(n.side, n.line) for n in notes] == [("left", 3), ("left", 3)]
    assert all(n.message.startswith("rewrite [cache-hint-streaming]: ") for n in notes)
    assert "non-temporal store" in notes[0].message


def test_a_fix_made_after_the_scan_is_noted_on_the_translated_side() -> None:
    source = ('#ifdef __cplusplus\nextern "C" {\n#endif\n#include <cuda_runtime.h>\nvoid f(void);\n'
              '#ifdef __cplusplus\n}\n#endif\n')
    entry = translate_source(source, "api.cpp").account.to_dict()
    entry["path"] = "api.cpp"
    notes = [n for n in translation_notes([entry], "api.cpp") if n.kind == KIND_REWRITE]
    assert [(n.side, n.line) for n in notes] == [("right", 1)]
    assert "extern-c-include" in notes[0].message
