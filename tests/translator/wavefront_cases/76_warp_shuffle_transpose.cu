// Register transpose across a warp with shuffles (4x4 per lane group)
__device__ void transpose4(float& a, float& b, float& c, float& d) {
  int lane = threadIdx.x % 32;  // expect: lane-id-32
  int r = lane & 3;
  float t0 = __shfl_sync(0xffffffff, r == 0 ? a : r == 1 ? b : r == 2 ? c : d, (lane & ~3) | 0);  // expect: full-mask-32
  float t1 = __shfl_sync(0xffffffff, r == 0 ? b : r == 1 ? c : r == 2 ? d : a, (lane & ~3) | 1);  // expect: full-mask-32
  a = t0;
  b = t1;
}
