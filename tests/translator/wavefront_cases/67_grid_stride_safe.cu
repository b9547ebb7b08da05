// Vectorised copy where 32 is a chunk size in elements
#define CHUNK 32
__global__ void copy_chunks(const float* __restrict__ src, float* __restrict__ dst, int n) {
  int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  int first = chunk * CHUNK;
  for (int k = 0; k < CHUNK && first + k < n; ++k) dst[first + k] = src[first + k];
  int within = chunk % CHUNK;
  if (within == 0 && first < n) dst[first] += 0.f;
}
