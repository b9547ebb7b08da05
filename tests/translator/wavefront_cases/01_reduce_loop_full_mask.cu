#include <cuda_runtime.h>

__inline__ __device__ float warpReduceSum(float val) {
  for (int offset = 16; offset > 0; offset /= 2)  // expect: reduction-offset-16
    val += __shfl_down_sync(0xffffffff, val, offset);  // expect: full-mask-32
  return val;
}

__global__ void sum_kernel(const float* in, float* out, int n) {
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
  v = warpReduceSum(v);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);  // expect: lane-id-32
}
