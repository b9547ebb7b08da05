#include <stdint.h>
__global__ void count_nonzero_per_warp(const float* x, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t bits = __ballot_sync(0xffffffff, i < n && x[i] != 0.f);  // expect: ballot-32bit, full-mask-32
  if (threadIdx.x % 32 == 0) counts[i / 32] = __popc(bits);  // expect: lane-id-32, popc-ballot
}
