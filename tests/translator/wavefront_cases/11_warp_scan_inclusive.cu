__device__ int warp_inclusive_scan(int v) {
  const int lane = threadIdx.x & 31;  // expect: lane-id-32
  for (int d = 1; d < 32; d <<= 1) {  // expect: reduction-offset-16
    int n = __shfl_up_sync(0xffffffff, v, d);  // expect: full-mask-32
    if (lane >= d) v += n;
  }
  return v;
}

__global__ void scan_tiles(const int* in, int* out, int* tile_sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  v = warp_inclusive_scan(v);
  if (i < n) out[i] = v;
  int total = __shfl_sync(0xffffffff, v, 31);  // expect: full-mask-32, lane-id-32
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}
