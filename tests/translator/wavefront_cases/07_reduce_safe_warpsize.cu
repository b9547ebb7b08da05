// Already wave-size neutral: HIP's warpSize, a 64-bit full mask, __lane_id()
__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffffffffffull, v, offset);
  return v;
}

__global__ void total(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  v = warp_sum(v);
  if (__lane_id() == 0) atomicAdd(out, v);
}
