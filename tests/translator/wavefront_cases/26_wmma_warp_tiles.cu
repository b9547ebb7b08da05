#include <mma.h>
using namespace nvcuda;
// Warp-tiled GEMM: each warp owns a 16x16 tile of C.
__global__ void wmma_gemm(const half* a, const half* b, float* c, int M, int N, int K) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // expect: warp-id-32
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    int aRow = warpM * 16, bCol = warpN * 16;
    if (aRow < M && bCol < N) {
      wmma::load_matrix_sync(a_frag, a + aRow * K + k, K);
      wmma::load_matrix_sync(b_frag, b + bCol * K + k, K);
      wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
  }
  if (warpM * 16 < M && warpN * 16 < N) wmma::store_matrix_sync(c + warpM * 16 * N + warpN * 16, acc, N, wmma::mem_row_major);
}
