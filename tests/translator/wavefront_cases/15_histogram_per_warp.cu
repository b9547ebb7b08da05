#define HIST_BINS 64
#define THREADS 256
#define WARPS_PER_BLOCK (THREADS / 32)  // expect: warp-id-32

// One private histogram per warp to cut contention.
__global__ void histogram_per_warp(const int* keys, unsigned* hist, int n) {
  __shared__ unsigned s_hist[WARPS_PER_BLOCK][HIST_BINS];
  int warp_id = threadIdx.x / 32;  // expect: warp-id-32
  for (int b = threadIdx.x; b < WARPS_PER_BLOCK * HIST_BINS; b += THREADS) (&s_hist[0][0])[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += THREADS * gridDim.x)
    atomicAdd(&s_hist[warp_id][keys[i] & (HIST_BINS - 1)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < HIST_BINS; b += THREADS) {
    unsigned total = 0;
    for (int w = 0; w < WARPS_PER_BLOCK; ++w) total += s_hist[w][b];
    atomicAdd(&hist[b], total);
  }
}
