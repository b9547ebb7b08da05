"""Readiness and hand-work counts come from one list, taken from what the translation leaves."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from translator.account import FileAccount, TreeAccount
from translator.tree import account_tree
from worker.scanning.inventory import build_inventory
from worker.scanning.readiness import summarize

WriteTree = Callable[[dict[str, str]], Path]

# In the style of a fused attention kernel: inline PTX, WMMA, a 32-lane reduction, an API with no HIP counterpart.
KERNEL = """#include <cuda_runtime.h>
#include <mma.h>
using namespace nvcuda;

__device__ __forceinline__ unsigned smem_ptr(const void* p) {
  unsigned r;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
  return r;
}

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

__global__ void attention_tile(const half* q, const half* k, float* s, float* m) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> qa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(qa, q, 16);
  wmma::load_matrix_sync(kb, k, 16);
  wmma::mma_sync(acc, qa, kb, acc);
  wmma::store_matrix_sync(s, acc, 16, wmma::mem_row_major);
  asm volatile("bar.sync 1, 64;");
  m[threadIdx.x] = warp_max(s[threadIdx.x] + (float)smem_ptr(s));
}

void launch(float* s, cudaStream_t stream) {
  cudaMemsetAsync(s, 0, 256 * sizeof(float), stream);
  cudaStreamAttachMemAsync(stream, s, 0, cudaMemAttachSingle);
  attention_tile<<<1, 32, 0, stream>>>(nullptr, nullptr, s, s);
}
"""


def test_readiness_and_hand_work_agree_on_inline_ptx_wmma_and_hazards(write_tree: WriteTree) -> None:
    tree = write_tree({"attn.cu": KERNEL})
    inventory = build_inventory(tree, ())
    account = account_tree(tree)
    readiness = summarize(inventory, account)
    # 2 asm statements, 8 WMMA lines, 2 hazards (the full mask is fixed, the offset-16 loop is not)
    assert inventory.constructs == {"inline-ptx": 2, "tensor-cores": 8}
    assert readiness.hand_work_by_kind["inline-ptx"] == 2 and readiness.hand_work_by_kind["tensor-cores"] == 8
    assert readiness.hand_work_by_kind["wavefront"] == 1 and readiness.automatic_by_kind["wavefront"] == 1
    assert readiness.hand_work == sum(readiness.hand_work_by_kind.values())
    assert readiness.items_total == readiness.translatable + readiness.deprecated + readiness.hand_work
    assert readiness.translatable_share == round((readiness.items_total - readiness.hand_work) / readiness.items_total, 4)
    constructs = {kind: int(note.split(":")[0]) for kind, note in readiness.constructs.items()}
    assert constructs == {kind: n for kind, n in readiness.hand_work_by_kind.items() if kind != "api"}
    assert sum(1 for site in readiness.hand_work_sites if site["kind"] != "api") == sum(constructs.values())
    assert readiness.translatable_share < 0.9  # 11 of its ~30 items are hand work: never "96-98%"


def test_what_the_account_says_was_ported_is_not_hand_work(write_tree: WriteTree) -> None:
    tree = write_tree({"attn.cu": KERNEL})
    inventory = build_inventory(tree, ())
    ported = TreeAccount(source=str(tree), destination="", files=[FileAccount(path="attn.cu")])
    readiness = summarize(inventory, ported)  # a translation that left no asm, no WMMA, no hazard
    assert readiness.hand_work_by_kind.get("inline-ptx", 0) == 0 and "tensor-cores" not in readiness.hand_work_by_kind
    assert readiness.automatic_by_kind["inline-ptx"] == 2 and readiness.automatic_by_kind["tensor-cores"] == 8
    left = summarize(inventory, account_tree(tree))
    assert left.hand_work - readiness.hand_work == 2 + 8 + 1 + left.hand_work_by_kind["api"]


def test_an_api_the_translation_leaves_is_hand_work_whatever_the_tables_say(write_tree: WriteTree) -> None:
    tree = write_tree({"attn.cu": KERNEL})
    account = account_tree(tree)
    names = {f["name"] for entry in account.files for f in entry.unconverted}
    assert names  # HIPIFY's tables give __shfl_xor_sync no HIP name: the translation leaves it
    readiness = summarize(build_inventory(tree, ()), account)
    assert set(readiness.hand_work_apis) == names
    assert readiness.hand_work_by_kind["api"] == sum(readiness.hand_work_apis.values())
