#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void row_stats(const float* x, float* mean, float* maxv, unsigned* bits, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float sum = 0.f, m = -1e30f;
  unsigned any = 0;
  for (int i = warp.thread_rank(); i < n; i += warp.size()) {
    sum += x[i];
    m = fmaxf(m, x[i]);
    any |= (unsigned)x[i];
  }
  sum = cg::reduce(warp, sum, cg::plus<float>{});
  float g = cg::reduce(warp, m, cg::greater<float>());
  float l = cg::reduce(warp, m, cg::less<float>{});
  unsigned o = cg::reduce(warp, any, cg::bit_or<unsigned>());
  unsigned a = cg::reduce(warp, any, cg::bit_and<unsigned>());
  unsigned xo = cg::reduce(warp, any, cg::bit_xor<unsigned>());
  if (warp.thread_rank() == 0) {
    mean[blockIdx.x] = sum / n;
    maxv[blockIdx.x] = g - l;
    bits[blockIdx.x] = o ^ a ^ xo;
  }
}

__global__ void tile16(const int* x, int* out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int v = cg::reduce(tile, x[threadIdx.x], cg::plus<int>());
  if (tile.thread_rank() == 0) out[threadIdx.x / 16] = v;
}
