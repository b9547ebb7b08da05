// Bit counting on data words: __popc/__ffs of data, not of ballots
__global__ void hamming_weights(const unsigned* words, int* weights, int* first_set, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned w = words[i];
  weights[i] = __popc(w);
  first_set[i] = __ffs(w) - 1;
}

__device__ int jaccard_bits(unsigned a, unsigned b) { return __popc(a & b) * 100 / max(1, __popc(a | b)); }
