// Flat 1-D launch over a row-major matrix with 32 columns: i % 32 is a column.
__global__ void scale_columns(float* m, const float* col_scale, int rows) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * 32) return;
  int c = i % 32;
  int r = i / 32;
  m[r * 32 + c] *= col_scale[c];
}

__global__ void add_bias_32(float* out, const float* bias, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] += bias[i % 32];
}
