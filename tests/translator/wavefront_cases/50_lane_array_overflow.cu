// Ported half-way: the lane is right (warpSize) but the staging array still has 32 entries.
__global__ void stage_lanes(const int* in, int* out) {
  __shared__ int lane_vals[32];  // expect: warp-array-32
  int lane = threadIdx.x % warpSize;
  if (threadIdx.x < warpSize) lane_vals[lane] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = lane_vals[(lane + 1) % warpSize];
}
