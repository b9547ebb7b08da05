#include <cooperative_groups.h>
namespace cg = cooperative_groups;

constexpr int kLanes = warpSize;  // expect: warpsize-constexpr

__global__ void tile_max(const float* x, float* out) {
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<warpSize>(block);  // expect: warpsize-constexpr
  float v = x[block.thread_rank()];
  for (int i = tile.size() / 2; i > 0; i /= 2) v = fmaxf(v, tile.shfl_down(v, i));
  if (tile.thread_rank() == 0) out[blockIdx.x] = v;
}
