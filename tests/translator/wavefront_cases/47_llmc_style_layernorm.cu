#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#define WARP_SIZE 32U

__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp,
                                         const float* weight, const float* bias, int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (idx >= N) return;
  const float* x = inp + idx * C;
  float sum = 0.0f;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
  sum = cg::reduce(warp, sum, cg::plus<float>{});
  float m = sum / C;
  if (warp.thread_rank() == 0 && mean != nullptr) mean[idx] = m;
  (void)out; (void)rstd; (void)weight; (void)bias;
}

__global__ void softmax_forward_kernel(float* out, const float* inp, int N, int C) {
  extern __shared__ float shared[];
  int idx = blockIdx.x;
  int tid = threadIdx.x;
  int warpId = threadIdx.x / WARP_SIZE;  // expect: warp-id-32
  int laneId = threadIdx.x % WARP_SIZE;  // expect: lane-id-32
  int warpsPerBlock = blockDim.x / WARP_SIZE;  // expect: warp-id-32
  float* maxvals = shared;
  const float* x = inp + idx * C;
  float maxval = -INFINITY;
  for (int i = tid; i < C; i += blockDim.x) maxval = fmaxf(maxval, x[i]);
  for (int offset = 16; offset > 0; offset /= 2) maxval = fmaxf(maxval, __shfl_down_sync(0xFFFFFFFF, maxval, offset));  // expect: reduction-offset-16, full-mask-32
  if (laneId == 0) maxvals[warpId] = maxval;
  __syncthreads();
  if (tid == 0) {
    float val = maxvals[tid];
    for (int i = 1; i < warpsPerBlock; i++) val = fmaxf(val, maxvals[i]);
    maxvals[0] = val;
  }
  __syncthreads();
  out[idx * C + tid] = maxvals[0];
}
