// Block-stride loop over a matrix with 32 columns: r and c are coordinates.
__global__ void relu_matrix32(float* m, int rows) {
  for (int i = threadIdx.x; i < rows * 32; i += blockDim.x) {
    int c = i % 32;
    int r = i / 32;
    float v = m[r * 32 + c];
    m[r * 32 + c] = v > 0.f ? v : 0.f;
  }
}

__global__ void interleave(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int group = i / 32;
  int pos = i & 31;
  out[group * 64 + pos] = a[i];
  out[group * 64 + 32 + pos] = b[i];
}
