"""The wavefront-hazard scan: what it reports, what it leaves alone, and the certain fixes."""
from __future__ import annotations

from translator.wavefront import TreeFacts, apply_fixes, file_facts, scan_source


def kinds(text: str, facts: TreeFacts | None = None) -> list[tuple[int, str]]:
    return [(h.line, h.kind) for h in (scan_source(text, facts) if facts else scan_source(text))]


def test_it_tells_a_lane_from_a_matrix_column() -> None:
    text = """__global__ void k(float* out, const float* in, int n) {
  int lane = threadIdx.x % 32;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int col = i % 32;
  int row = i / 32;
  out[row * 32 + col] = __shfl_sync(0xffffffffffffffffull, in[i], lane);
}
"""
    assert kinds(text) == [(2, "lane-id-32")]


def test_an_unnamed_lane_is_found_by_its_use_as_a_shuffle_source() -> None:
    text = """__global__ void k(float* x) {
  int src = threadIdx.x & 31;
  int unused = threadIdx.x & 31;
  x[threadIdx.x] = __shfl_sync(0xffffffffffffffffull, x[threadIdx.x], src ^ 1) + unused;
}
"""
    assert kinds(text) == [(2, "lane-id-32")]


def test_it_follows_defines_constexpr_const_and_enums() -> None:
    text = """#define WARP_SIZE 32
constexpr int kWarp = 32;
enum { LOG_WARP = 5 };
__global__ void k(int* out) {
  const int W = 32;
  int lane = threadIdx.x % WARP_SIZE;
  int lane2 = threadIdx.x & (kWarp - 1);
  int warp = threadIdx.x >> LOG_WARP;
  int lane3 = threadIdx.x % W;
  out[threadIdx.x] = lane + lane2 + warp + lane3;
}
"""
    assert kinds(text) == [(6, "lane-id-32"), (7, "lane-id-32"), (8, "warp-id-32"), (9, "lane-id-32")]


def test_hip_spellings_and_a_per_platform_warp_size_are_safe() -> None:
    text = """#ifdef __HIP_PLATFORM_AMD__
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif
__global__ void k(float* x) {
  int lane = threadIdx.x % warpSize;
  int lane2 = __lane_id();
  int lane3 = threadIdx.x % WARP_SIZE;
  int wave = threadIdx.x / __AMDGCN_WAVEFRONT_SIZE;
  float v = x[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffffffffffull, v, o);
  x[lane + lane2 + lane3 + wave] = v;
}
"""
    assert kinds(text) == []


def test_a_definition_elsewhere_in_the_tree_is_seen_through_the_facts() -> None:
    header = "#pragma once\n#define WARP_SIZE 32\n#define FULL_MASK 0xffffffff\n#define DEVICE __device__ inline\n"
    kernel = """#include "common.h"
DEVICE int lane_of() { return threadIdx.x % WARP_SIZE; }
__global__ void k(float* x) { x[0] = __shfl_sync(FULL_MASK, x[0], 0); }
"""
    assert kinds(kernel) == []
    facts = TreeFacts.of([file_facts(header), file_facts(kernel)])
    assert kinds(kernel, facts) == [(2, "lane-id-32"), (3, "full-mask-32")]


def test_comments_and_strings_are_not_code() -> None:
    text = """// __device__ int lane = threadIdx.x % 32;
/* __global__ void k() { int lane = threadIdx.x % 32; } */
__global__ void k(char* s) {
  const char* msg = "lane = threadIdx.x % 32; __shfl_sync(0xffffffff, v, 0)";  // int lane = threadIdx.x & 31;
  s[0] = msg[0];
}
"""
    assert kinds(text) == []


def test_host_code_is_not_scanned() -> None:
    text = """void host(int* out, int n) {
  for (int i = 0; i < n; ++i) { int lane = i % 32; out[i] = lane; }
  unsigned mask = 0xffffffff;
  out[0] = mask;
}
"""
    assert kinds(text) == []


def test_the_certain_fixes_rewrite_masks_ballots_and_counts() -> None:
    text = """__global__ void k(const int* in, int* out) {
  unsigned votes = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);
  out[blockIdx.x] = __popc(votes) + __ffs(votes);
  float v = __shfl_down_sync(0xFFFFFFFFu, 1.0f, 1);
}
"""
    hazards = scan_source(text)
    fixed, hazards = apply_fixes(text, hazards)
    assert all(h.applied for h in hazards if h.rule)
    assert {h.rule for h in hazards} == {"wavefront.full-mask-64", "wavefront.widen-ballot", "wavefront.popcll-ballot"}
    assert fixed == """__global__ void k(const int* in, int* out) {
  unsigned long long votes = __ballot_sync(0xffffffffffffffffull, in[threadIdx.x] > 0);
  out[blockIdx.x] = __popcll(votes) + __ffsll(votes);
  float v = __shfl_down_sync(0xffffffffffffffffull, 1.0f, 1);
}
"""
    assert fixed.count("\n") == text.count("\n")


def test_a_disabled_rule_leaves_its_code_and_the_hazard_as_a_suggestion() -> None:
    text = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
    fixed, hazards = apply_fixes(text, scan_source(text), {"wavefront.full-mask-64"})
    assert fixed == text
    assert [(h.kind, h.rule, h.applied) for h in hazards] == [("full-mask-32", "wavefront.full-mask-64", False)]


def test_a_mask_variable_is_widened_where_it_is_set_and_reported_where_it_is_used() -> None:
    text = """__global__ void k(float* x) {
  unsigned int full = 0xffffffff;
  x[threadIdx.x] = __shfl_sync(full, x[threadIdx.x], 0);
}
"""
    hazards = scan_source(text)
    assert [(h.line, h.kind) for h in hazards] == [(3, "full-mask-32")]
    fixed, _ = apply_fixes(text, hazards)
    assert "  unsigned long long full = 0xffffffffffffffffull;\n" in fixed


def test_widening_is_only_a_suggestion_when_the_ballot_is_not_stored_alone() -> None:
    text = """__global__ void k(int* out) {
  unsigned a = __ballot_sync(0xffffffffffffffffull, threadIdx.x > 3), b = 0;
  out[0] = a + b;
}
"""
    [hazard] = scan_source(text)
    assert (hazard.kind, hazard.rule) == ("ballot-32bit", "")
    assert "unsigned long long" in hazard.fix


def test_each_hazard_says_why_whether_wave32_is_affected_and_what_to_do() -> None:
    text = "__device__ int lane() { return threadIdx.x & 31; }\n"
    [hazard] = scan_source(text)
    data = hazard.to_dict()
    assert data["line"] == 1 and data["column"] == 31 and data["expression"] == "threadIdx.x & 31"
    assert "64-lane" in data["why"] and data["wave32"] is False
    assert "__lane_id()" in data["fix"] and data["rule"] == "" and data["applied"] is False
