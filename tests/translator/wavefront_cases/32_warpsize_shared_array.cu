__global__ void stage_through_shared(const float* in, float* out) {
  __shared__ float stage[warpSize];  // expect: warpsize-constexpr
  int lane = threadIdx.x % warpSize;
  stage[lane] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncwarp();
  out[blockIdx.x * blockDim.x + threadIdx.x] = stage[(lane + 1) % warpSize];
}
