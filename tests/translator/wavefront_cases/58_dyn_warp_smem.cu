// Per-warp partial results placed after the data in dynamic shared memory
__global__ void rms_norm(const float* x, float* y, int cols, float eps) {
  extern __shared__ float smem[];
  float* warp_partial = smem + cols;
  const int lane = threadIdx.x & 31;  // expect: lane-id-32
  const int warp = threadIdx.x >> 5;  // expect: warp-id-32
  const int num_warps = blockDim.x >> 5;  // expect: warp-id-32
  float ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) { smem[c] = x[blockIdx.x * cols + c]; ss += smem[c] * smem[c]; }
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_down_sync(0xffffffff, ss, o);  // expect: reduction-offset-16, full-mask-32
  if (lane == 0) warp_partial[warp] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < num_warps; ++w) t += warp_partial[w];
    warp_partial[0] = rsqrtf(t / cols + eps);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = smem[c] * warp_partial[0];
}
