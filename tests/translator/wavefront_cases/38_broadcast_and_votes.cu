__global__ void normalize_if_all_positive(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 1.f;
  float first = __shfl_sync(0xffffffff, v, 0);  // expect: full-mask-32
  if (__all_sync(0xffffffff, v > 0.f)) v /= first;  // expect: full-mask-32
  if (__any_sync(0xffffffff, v > 100.f)) v = fminf(v, 100.f);  // expect: full-mask-32
  __syncwarp(0xffffffff);  // expect: full-mask-32
  if (i < n) x[i] = v;
}
