#include <stdint.h>
__device__ inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  return h & 0xFFFFFFFFu;
}
__global__ void bloom_insert(const uint32_t* keys, uint32_t* bits, int n, uint32_t nbits) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < 3; ++k) {
    uint32_t b = mix32(keys[i] + k * 0x9e3779b9u) % nbits;
    atomicOr(&bits[b >> 5], 1u << (b & 31));
  }
}
