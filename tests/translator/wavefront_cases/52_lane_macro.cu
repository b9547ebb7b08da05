#define LANE_ID (threadIdx.x & 31)  // expect: lane-id-32
#define WARP_ID (threadIdx.x >> 5)  // expect: warp-id-32
#define SHFL_DOWN(v, o) __shfl_down_sync(0xffffffff, v, o)  // expect: full-mask-32

__global__ void macro_reduce(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += SHFL_DOWN(v, o);  // expect: reduction-offset-16
  if (LANE_ID == 0) out[blockIdx.x * (blockDim.x / 32) + WARP_ID] = v;  // expect: warp-id-32
}
