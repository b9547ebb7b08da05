// A HIP-native warp scan: lane from __lane_id(), loop bound warpSize, 64-bit masks
__device__ float warp_scan(float v) {
  const int lane = __lane_id();
  for (int d = 1; d < warpSize; d <<= 1) {
    float n = __shfl_up_sync(0xffffffffffffffffull, v, d);
    if (lane >= d) v += n;
  }
  return v;
}

__global__ void scan_rows(float* rows, int cols) {
  float* row = rows + blockIdx.x * cols;
  int c = threadIdx.x;
  if (c < cols) row[c] = warp_scan(row[c]);
  float last = __shfl_sync(0xffffffffffffffffull, row[c], warpSize - 1);
  if (c == 0) row[0] += last * 0.f;
}
