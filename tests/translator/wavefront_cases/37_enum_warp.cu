enum { kWarpThreads = 32, kLogWarpThreads = 5 };

__device__ unsigned lane_of(unsigned tid) { return tid & (kWarpThreads - 1); }  // expect: lane-id-32

__global__ void gather_by_warp(const float* src, float* dst, const int* perm) {
  unsigned tid = threadIdx.x;
  unsigned lane_idx = tid & (kWarpThreads - 1);  // expect: lane-id-32
  unsigned warp_idx = tid >> kLogWarpThreads;  // expect: warp-id-32
  dst[blockIdx.x * blockDim.x + tid] = src[perm[warp_idx] * kWarpThreads + lane_idx];
}
