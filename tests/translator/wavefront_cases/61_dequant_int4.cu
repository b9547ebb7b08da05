#include <cuda_fp16.h>
// int4 weights, 8 per 32-bit word; each lane unpacks one nibble of a word fetched by its group leader.
__global__ void dequant_int4(const unsigned* packed, const half* scales, half* out, int n_words) {
  int lane = threadIdx.x % 32;  // expect: lane-id-32
  int word_idx = (blockIdx.x * blockDim.x + threadIdx.x) / 8;
  unsigned w = (lane % 8 == 0 && word_idx < n_words) ? packed[word_idx] : 0u;
  w = __shfl_sync(0xffffffff, w, lane & ~7);  // expect: full-mask-32
  int nibble = (w >> ((lane & 7) * 4)) & 0xf;
  if (word_idx < n_words) out[word_idx * 8 + (lane & 7)] = __float2half((nibble - 8) * __half2float(scales[word_idx / 16]));
}
