// ELL SpMV with one thread per row and 32 columns per row slab
__global__ void spmv_ell(int rows, int width, const int* col_idx, const float* vals, const float* x, float* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.f;
  for (int k = 0; k < width; ++k) {
    int slab = k / 32, within = k % 32;
    int idx = (slab * rows + row) * 32 + within;
    acc += vals[idx] * x[col_idx[idx]];
  }
  y[row] = acc;
}
