// Radix sort digit extraction: ">> 5" and "& 31" on keys
__global__ void digit_counts(const unsigned* keys, unsigned* counts, int n, int shift) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned key = keys[i];
  unsigned digit = (key >> shift) & 31;
  unsigned word = key >> 5;
  atomicAdd(&counts[digit], 1u);
  if (word == 0) atomicAdd(&counts[32], 1u);
}
