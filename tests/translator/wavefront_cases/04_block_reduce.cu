#include <cuda_runtime.h>

__inline__ __device__ float warpReduce(float val) {
  for (int offset = 32 / 2; offset > 0; offset >>= 1)  // expect: reduction-offset-16
    val += __shfl_down_sync(0xffffffff, val, offset);  // expect: full-mask-32
  return val;
}

__inline__ __device__ float blockReduceSum(float val) {
  static __shared__ float shared[32];
  int lane = threadIdx.x % 32;  // expect: lane-id-32
  int wid = threadIdx.x / 32;  // expect: warp-id-32
  val = warpReduce(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / 32) ? shared[lane] : 0;  // expect: warp-id-32
  if (wid == 0) val = warpReduce(val);
  return val;
}

__global__ void dot(const float* a, const float* b, float* out, int n) {
  float s = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += a[i] * b[i];
  s = blockReduceSum(s);
  if (threadIdx.x == 0) atomicAdd(out, s);
}
