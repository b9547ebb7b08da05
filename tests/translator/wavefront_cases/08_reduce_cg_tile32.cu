#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// An explicit 32-thread tile: the code asks for 32 lanes and gets them on every target.
__global__ void tile_sum(const float* x, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  for (int offset = 16; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) atomicAdd(out, v);
}
