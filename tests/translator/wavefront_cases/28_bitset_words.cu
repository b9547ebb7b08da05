// A bitset over element indices: ">> 5" picks the word, "& 31" the bit. Not lanes.
__global__ void mark_selected(const int* keys, unsigned* bitset, int n, int threshold) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n || keys[idx] < threshold) return;
  atomicOr(&bitset[idx >> 5], 1u << (idx & 31));
}

__device__ bool test_bit(const unsigned* bitset, int bit) {
  return (bitset[bit / 32] >> (bit % 32)) & 1u;
}
