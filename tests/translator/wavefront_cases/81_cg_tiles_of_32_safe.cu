#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// Block reduction over explicit 32-thread tiles: "/ 32" and "% 32" index the tiles cooperative groups make,
// which have 32 threads on every target. (Seen in llm.c's layernorm and fused-classifier kernels.)
__global__ void row_sum(const float* x, float* out, int cols) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ float partial[32];
  int num_tiles = blockDim.x / 32;
  int tile_id = threadIdx.x / 32;
  int lane_id = threadIdx.x % 32;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += x[blockIdx.x * cols + c];
  s = cg::reduce(tile, s, cg::plus<float>());
  if (lane_id == 0) partial[tile_id] = s;
  __syncthreads();
  s = lane_id < num_tiles ? partial[lane_id] : 0.f;
  s = cg::reduce(tile, s, cg::plus<float>());
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
