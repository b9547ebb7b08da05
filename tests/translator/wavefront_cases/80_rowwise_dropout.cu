__global__ void dropout_mask_bits(const float* rnd, unsigned* mask_words, float p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned keep = __ballot_sync(0xffffffff, i < n && rnd[i] >= p);  // expect: ballot-32bit, full-mask-32
  if (threadIdx.x % 32 == 0 && i < n) mask_words[i / 32] = keep;  // expect: lane-id-32
}
