// warpSize used at run time only: fine on HIP 7
__global__ void per_lane_sums(const float* x, float* out, int n) {
  int lane = threadIdx.x % warpSize;
  int warp = threadIdx.x / warpSize;
  int warps = blockDim.x / warpSize;
  float s = 0.f;
  for (int i = lane; i < n; i += warpSize) s += x[warp * n + i];
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffffffffffull, s, o);
  if (lane == 0 && warp < warps) out[blockIdx.x * warps + warp] = s;
}
