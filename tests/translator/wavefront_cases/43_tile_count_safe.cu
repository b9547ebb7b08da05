// Rounding a size up to a multiple of 32 elements: tiles of data, not warps
__global__ void pad_rows(const float* in, float* out, int rows, int cols) {
  int padded = (cols + 31) / 32 * 32;
  int tiles = (rows + 31) / 32;
  int r = blockIdx.x;
  if (r >= tiles * 32) return;
  for (int c = threadIdx.x; c < padded; c += blockDim.x) out[r * padded + c] = (r < rows && c < cols) ? in[r * cols + c] : 0.f;
}
