// Element-wise kernels with 32-wide unrolling: no lanes involved.
template <int VEC>
__global__ void axpy_unrolled(float a, const float* x, float* y, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 32;
#pragma unroll
  for (int k = 0; k < 32; ++k) {
    int i = base + k;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

__global__ void chunk_offsets(const int* lengths, int* offsets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) offsets[i] = (lengths[i] + 31) / 32 * 32;
}
