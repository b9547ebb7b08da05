// A project that already picks the wave size per platform: its WARP_SIZE is not assumed to be 32.
#if defined(__HIP_PLATFORM_AMD__)
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif

__global__ void lane_sums(const float* x, float* out) {
  int lane = threadIdx.x % WARP_SIZE;
  int warp = threadIdx.x / WARP_SIZE;
  float v = x[threadIdx.x];
  if (lane == 0) out[warp] = v;
}
