// A warp transposes 32x32 blocks through shared memory, one row per lane.
#define LANES 32
__global__ void warp_transpose(const float* in, float* out) {
  __shared__ float buf[8][LANES][LANES + 1];  // expect: warp-array-32
  int lane = __lane_id();
  int warp = threadIdx.x / warpSize;
  for (int r = 0; r < LANES; ++r) buf[warp][r][lane] = in[(blockIdx.x * 8 + warp) * LANES * LANES + r * LANES + lane];
  __syncwarp();
  for (int r = 0; r < LANES; ++r) out[(blockIdx.x * 8 + warp) * LANES * LANES + r * LANES + lane] = buf[warp][lane][r];
}
