#define BINS 256
// Bin index from the data: "% 32" here has nothing to do with lanes.
__global__ void histogram_coarse(const unsigned char* data, unsigned* hist, int n) {
  __shared__ unsigned s_hist[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) s_hist[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    unsigned bucket = (data[i] >> 3) % 32;
    atomicAdd(&s_hist[bucket], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], s_hist[b]);
}
