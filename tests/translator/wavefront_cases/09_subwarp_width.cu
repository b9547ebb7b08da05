// Groups of 8 lanes: an explicit width keeps each shuffle inside its group on any wavefront size.
__device__ float group8_sum(float v, unsigned long long mask) {
  for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(mask, v, o, 8);
  return v;
}

__global__ void quad_norm(const float4* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 q = i < n ? x[i] : make_float4(0, 0, 0, 0);
  float s = group8_sum(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, __activemask());
  if ((threadIdx.x & 7) == 0 && i < n) out[i / 8] = sqrtf(s);
}
