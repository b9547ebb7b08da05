namespace kernels {
constexpr int kWarpSize = 32;

template <typename T, int kThreads>
__global__ void mean_rows(const T* __restrict__ x, float* __restrict__ mean, int cols) {
  float acc = 0.f;
  for (int c = threadIdx.x; c < cols; c += kThreads) acc += static_cast<float>(x[blockIdx.x * cols + c]);
  for (int o = kWarpSize / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);  // expect: reduction-offset-16, full-mask-32
  __shared__ float partial[kThreads / kWarpSize];
  const int lane = threadIdx.x % kWarpSize;  // expect: lane-id-32
  const int warp = threadIdx.x / kWarpSize;  // expect: warp-id-32
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int w = 0; w < kThreads / kWarpSize; ++w) total += partial[w];  // expect: warp-id-32
    mean[blockIdx.x] = total / cols;
  }
}
}  // namespace kernels
