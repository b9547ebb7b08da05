__device__ float reduce_in_warp(float v, unsigned mask) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(mask, v, o);  // expect: full-mask-32
  return v;
}

__global__ void partial_sums(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int full = 0xffffffff;
  float v = i < n ? x[i] : 0.f;
  v = __shfl_sync(full, v, 0) + v;  // expect: full-mask-32
  out[i] = reduce_in_warp(v, __activemask());
}
