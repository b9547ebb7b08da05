__global__ void argmax_rows(const float* x, int* arg, int cols) {
  const float* row = x + blockIdx.x * cols;
  float best = -1e30f;
  int best_i = -1;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) if (row[c] > best) { best = row[c]; best_i = c; }
  for (int o = 16; o > 0; o >>= 1) {  // expect: reduction-offset-16
    float ob = __shfl_xor_sync(0xffffffff, best, o);  // expect: full-mask-32
    int oi = __shfl_xor_sync(0xffffffff, best_i, o);  // expect: full-mask-32
    if (ob > best || (ob == best && oi < best_i)) { best = ob; best_i = oi; }
  }
  if (threadIdx.x == 0) arg[blockIdx.x] = best_i;
}
