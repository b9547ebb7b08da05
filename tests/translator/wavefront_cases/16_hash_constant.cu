#include <stdint.h>
// FNV-1a and a 32-bit mask as a hash constant: not a lane mask
__device__ __forceinline__ uint32_t fnv1a(const uint8_t* p, int len) {
  uint32_t h = 0x811c9dc5u;
  for (int i = 0; i < len; ++i) h = (h ^ p[i]) * 16777619u;
  return h & 0xffffffff;
}

__global__ void hash_keys(const uint8_t* keys, uint32_t* slots, int n, int len, uint32_t capacity) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t h = fnv1a(keys + i * len, len);
  uint32_t empty = 0xffffffff;
  uint32_t slot = h % capacity;
  while (atomicCAS(&slots[slot], empty, h) != empty) slot = (slot + 1) % capacity;
}
