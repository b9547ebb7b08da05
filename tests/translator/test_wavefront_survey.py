"""The scan's survey of a whole text (triggers and literal full masks) and its text-level reduction loops."""
from __future__ import annotations

from translator.wavefront.reductions import DOUBLING, HALVING, shuffle_loops, step_direction
from translator.wavefront.survey import survey

KERNEL = """__global__ void k(float* x, int* lanes) {
  float v = x[threadIdx.x];
  v += __shfl_down_sync(0xffffffff, v, 1);
  int lane = threadIdx.x % 32;
  lanes[lane] = __ballot_sync(0xffffffff, v > 0);
}
int main() { int n = 1 << 20; return n >> 5; }
"""


def test_the_survey_finds_literal_masks_and_the_places_that_need_data_flow() -> None:
    found = survey(KERNEL, frozenset(), shuffle_macros=False, warp_size=False)
    assert [(name, KERNEL[start:end]) for name, start, end in found.literal_masks] == [
        ("__shfl_down_sync", "0xffffffff")]  # a ballot's mask is looked at with its result, in depth
    places = [KERNEL[p:p + 8] for p in found.triggers]
    assert places == ["32;\n  la", "__ballot", "<< 20; r", ">> 5; }\n"]  # % 32, a ballot, 1 << n, >> 5


def test_warp_arrays_and_constants_are_triggers_only_where_they_occur() -> None:
    text = "__device__ int tile[32];\n__device__ int kWarp;\n"
    assert survey(text, frozenset({"kWarp"}), shuffle_macros=False, warp_size=False).triggers == [
        text.index("[32]"), text.index("kWarp")]
    assert survey("__device__ int a[31];\n", frozenset(), shuffle_macros=False, warp_size=False).triggers == []


def test_a_loop_step_halves_doubles_or_neither() -> None:
    assert step_direction("o", " o >>= 1") == step_direction("o", "o = o / 2") == HALVING
    assert step_direction("o", "o <<= 1") == step_direction("o", "o += o") == DOUBLING
    assert step_direction("o", "o += 2") == step_direction("o", "o++") == ""


def test_a_reduction_loop_is_found_before_the_last_shuffle_only() -> None:
    loop = "for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(m, v, o);\n"
    text = f"__device__ float f(float v, unsigned m) {{\n  {loop}  return v;\n}}\n"
    assert [(h.kind, text[h.start:h.end]) for h in shuffle_loops(text, {}, frozenset(), [])] == [
        ("reduction-offset-16", "o = 16")]
    no_shuffle = text.replace("__shfl_down_sync(m, v, o)", "o")
    assert shuffle_loops(no_shuffle, {}, frozenset(), []) == []
