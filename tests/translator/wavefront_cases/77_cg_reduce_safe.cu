#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void norms(const float* x, float* out, int rows, int cols) {
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= rows) return;
  float s = 0.f;
  for (int c = warp.thread_rank(); c < cols; c += warp.size()) s += x[row * cols + c] * x[row * cols + c];
  s = cg::reduce(warp, s, cg::plus<float>());
  if (warp.thread_rank() == 0) out[row] = sqrtf(s);
}
