__device__ float warp_prefix(float v, float* total) {
  int lane = threadIdx.x % 32;  // expect: lane-id-32
#pragma unroll
  for (int i = 1; i <= 16; i *= 2) {  // expect: reduction-offset-16
    float n = __shfl_up_sync(0xffffffff, v, i);  // expect: full-mask-32
    if (lane >= i) v += n;
  }
  *total = __shfl_sync(0xffffffff, v, 31);  // expect: full-mask-32, lane-id-32
  return v;
}
