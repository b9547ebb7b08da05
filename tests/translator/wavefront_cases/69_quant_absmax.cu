// Per-block absmax for 8-bit quantisation (bitsandbytes-like)
template <int THREADS>
__global__ void block_absmax(const float* x, float* absmax, int n) {
  __shared__ float warp_max[THREADS / 32];
  int tid = threadIdx.x;
  int gid = blockIdx.x * THREADS + tid;
  float v = gid < n ? fabsf(x[gid]) : 0.f;
  unsigned full = 0xffffffffu;
  v = fmaxf(v, __shfl_xor_sync(full, v, 16));  // expect: full-mask-32, reduction-offset-16
  v = fmaxf(v, __shfl_xor_sync(full, v, 8));  // expect: full-mask-32
  v = fmaxf(v, __shfl_xor_sync(full, v, 4));  // expect: full-mask-32
  v = fmaxf(v, __shfl_xor_sync(full, v, 2));  // expect: full-mask-32
  v = fmaxf(v, __shfl_xor_sync(full, v, 1));  // expect: full-mask-32
  if (tid % 32 == 0) warp_max[tid / 32] = v;  // expect: lane-id-32, warp-id-32
  __syncthreads();
  if (tid == 0) {
    float m = 0.f;
    for (int w = 0; w < THREADS / 32; ++w) m = fmaxf(m, warp_max[w]);  // expect: warp-id-32
    absmax[blockIdx.x] = m;
  }
}
