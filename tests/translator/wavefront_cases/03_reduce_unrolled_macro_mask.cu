#define FULL_WARP_MASK 0xffffffffu

__device__ float warp_sum_unrolled(float v) {
  v += __shfl_down_sync(FULL_WARP_MASK, v, 16);  // expect: full-mask-32, reduction-offset-16
  v += __shfl_down_sync(FULL_WARP_MASK, v, 8);  // expect: full-mask-32
  v += __shfl_down_sync(FULL_WARP_MASK, v, 4);  // expect: full-mask-32
  v += __shfl_down_sync(FULL_WARP_MASK, v, 2);  // expect: full-mask-32
  v += __shfl_down_sync(FULL_WARP_MASK, v, 1);  // expect: full-mask-32
  return v;
}
