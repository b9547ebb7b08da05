#define TILE 32
// 1024 threads per block laid out as a 32x32 tile: "% 32" and "/ 32" are tile coordinates.
__global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x % 32;
  int ty = threadIdx.x / 32;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    As[ty][tx] = (row < M && t * TILE + tx < K) ? A[row * K + t * TILE + tx] : 0.f;
    Bs[ty][tx] = (col < N && t * TILE + ty < K) ? B[(t * TILE + ty) * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
