// 32 replicas of the histogram, chosen by thread, to spread bank conflicts (works on any wave size)
#define REPLICAS 32
__global__ void histogram_replicated(const unsigned* in, unsigned* out, int n, int bins) {
  extern __shared__ unsigned s_hist[];
  int replica = threadIdx.x % REPLICAS;
  for (int b = threadIdx.x; b < bins * REPLICAS; b += blockDim.x) s_hist[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&s_hist[(in[i] % bins) * REPLICAS + replica], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) {
    unsigned sum = 0;
    for (int r = 0; r < REPLICAS; ++r) sum += s_hist[b * REPLICAS + r];
    atomicAdd(&out[b], sum);
  }
}
