__global__ void row_softmax(const float* in, float* out, int cols) {
  const int WARP = 32;
  const int tid = threadIdx.x;
  const int lane = tid % WARP;  // expect: lane-id-32
  const float* row = in + blockIdx.x * cols;
  float m = -1e30f;
  for (int c = lane; c < cols; c += WARP) m = fmaxf(m, row[c]);
  for (int o = WARP / 2; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));  // expect: full-mask-32, reduction-offset-16
  float s = 0.f;
  for (int c = lane; c < cols; c += WARP) s += __expf(row[c] - m);
  for (int o = WARP / 2; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);  // expect: full-mask-32, reduction-offset-16
  for (int c = lane; c < cols; c += WARP) out[blockIdx.x * cols + c] = __expf(row[c] - m) / s;
}
