#include <cuda_runtime.h>
struct Params { float scale; int n; };
__global__ void k(const __grid_constant__ Params p, int* counters, unsigned long long* t, float* f) {
  atomicAdd_system(counters, 1);
  atomicAdd_block(counters + 1, 1);
  atomicMax_system(counters + 2, p.n);
  atomicCAS_block(counters + 3, 0, 1);
  atomicExch_system(f, p.scale);
  __nanosleep(100);
  const auto mask = __activemask();
  unsigned peers = __match_any_sync(mask, threadIdx.x & 3);
  int pred;
  unsigned same = __match_all_sync(mask, p.n, &pred);
  int s = __reduce_add_sync(mask, (int)threadIdx.x);
  unsigned mn = __reduce_min_sync(mask, threadIdx.x);
  unsigned mx = __reduce_max_sync(mask, threadIdx.x);
  unsigned an = __reduce_and_sync(mask, threadIdx.x);
  unsigned o = __reduce_or_sync(mask, threadIdx.x);
  unsigned x = __reduce_xor_sync(mask, threadIdx.x);
  t[threadIdx.x] = peers + same + s + mn + mx + an + o + x + pred;
}
