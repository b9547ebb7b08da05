#define BLOCK_DIM 32
__global__ void matmul_shared(const float* a, const float* b, float* c, int n) {
  __shared__ float sa[BLOCK_DIM][BLOCK_DIM];
  __shared__ float sb[BLOCK_DIM][BLOCK_DIM];
  int row = blockIdx.y * BLOCK_DIM + threadIdx.y;
  int col = blockIdx.x * BLOCK_DIM + threadIdx.x;
  float sum = 0.0f;
  for (int tile = 0; tile < n / BLOCK_DIM; ++tile) {
    sa[threadIdx.y][threadIdx.x] = a[row * n + tile * BLOCK_DIM + threadIdx.x];
    sb[threadIdx.y][threadIdx.x] = b[(tile * BLOCK_DIM + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCK_DIM; ++k) sum += sa[threadIdx.y][k] * sb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}
