// Butterfly reduction for the row maximum (softmax pre-pass)
template <typename T>
__device__ __forceinline__ T warp_allreduce_max(T v) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {  // expect: reduction-offset-16
    T other = __shfl_xor_sync(0xFFFFFFFF, v, mask);  // expect: full-mask-32
    v = v > other ? v : other;
  }
  return v;
}

template <typename T>
__global__ void row_max(const T* x, T* out, int cols) {
  const T* row = x + blockIdx.x * cols;
  T m = row[threadIdx.x];
  for (int c = threadIdx.x + 32; c < cols; c += 32) m = row[c] > m ? row[c] : m;
  m = warp_allreduce_max(m);
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}
