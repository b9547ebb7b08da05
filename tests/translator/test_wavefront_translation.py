"""The hazard scan inside the translation: the account, the fixes applied, the tree's facts, the CLI."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from translator import TranslateOptions, translate_source, translate_tree

KERNEL = """#include "common.cuh"
__global__ void count(const int* in, int* out) {
  unsigned votes = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);
  int lane = threadIdx.x % WARP_SIZE;
  if (lane == 0) atomicAdd(out, __popc(votes));
}
"""
HEADER = "#pragma once\n#define WARP_SIZE 32\n"
ROOT = Path(__file__).resolve().parents[2]


def test_the_translation_applies_the_certain_fixes_and_accounts_for_every_hazard() -> None:
    result = translate_source(KERNEL.replace("WARP_SIZE", "32"), "count.cu")
    text = result.text
    assert "unsigned long long votes = __ballot_sync(0xffffffffffffffffull," in text
    assert "__popcll(votes)" in text and "int lane = threadIdx.x % 32;" in text
    found = [(h["line"], h["kind"], h["applied"]) for h in result.account.wavefront]
    assert found == [(3, "ballot-32bit", True), (3, "full-mask-32", True), (4, "lane-id-32", False),
                     (5, "popc-ballot", True)]


def test_a_file_changed_only_by_a_wavefront_fix_counts_as_translated() -> None:
    text = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
    result = translate_source(text, "f.h")
    assert result.account.changed and result.account.status == "translated"
    assert "0xffffffffffffffffull" in result.text


def test_disabled_rules_are_honoured() -> None:
    options = TranslateOptions(disabled_rules=frozenset({"wavefront.full-mask-64", "wavefront.popcll-ballot"}))
    result = translate_source(KERNEL.replace("WARP_SIZE", "32"), "count.cu", options)
    assert "__ballot_sync(0xffffffff," in result.text and "__popc(votes)" in result.text
    assert "unsigned long long votes" in result.text  # wavefront.widen-ballot still applies
    assert [h["applied"] for h in result.account.wavefront] == [True, False, False, False]


def test_the_scan_can_be_turned_off() -> None:
    result = translate_source(KERNEL, "count.cu", TranslateOptions(wavefront_scan=False))
    assert result.account.wavefront == [] and "0xffffffff," in result.text


def test_a_tree_sees_the_constants_of_its_headers_and_totals_the_hazards(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "common.cuh").write_text(HEADER)
    (tmp_path / "src" / "count.cu").write_text(KERNEL)
    tree = translate_tree(tmp_path / "src", tmp_path / "out")
    entry = next(f for f in tree.files if f.path == "count.cu")
    assert [h["kind"] for h in entry.wavefront] == ["ballot-32bit", "full-mask-32", "lane-id-32", "popc-ballot"]
    totals = tree.totals()
    assert (totals["wavefront_total"], totals["wavefront_fixed"]) == (4, 3)
    assert totals["wavefront_by_kind"]["lane-id-32"] == 1
    assert "__popcll(votes)" in (tmp_path / "out" / "count.cu").read_text()


def test_the_command_line_reports_hazards_and_takes_disabled_rules(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "common.cuh").write_text(HEADER)
    (tmp_path / "src" / "count.cu").write_text(KERNEL)
    done = subprocess.run([sys.executable, "-m", "translator", str(tmp_path / "src"), "-o", str(tmp_path / "out"),
                           "--disable-fix-rule", "wavefront.widen-ballot", "--account", str(tmp_path / "a.json"),
                           "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "wavefront count.cu:4: lane-id-32: threadIdx.x % WARP_SIZE; suggest: __lane_id()" in done.stdout
    assert "4 wavefront hazards (2 fixed)" in done.stdout
    account = json.loads((tmp_path / "a.json").read_text())
    assert account["totals"]["wavefront_fixed"] == 2
    assert "unsigned votes" in (tmp_path / "out" / "count.cu").read_text()
