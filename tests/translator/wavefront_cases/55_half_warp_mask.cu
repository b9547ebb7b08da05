// The lower half of a 32-lane warp exchanges with its partner in the upper half.
__global__ void half_swap(float* x) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  float w = __shfl_xor_sync(0x0000ffff, v, 16);  // expect: full-mask-32
  x[blockIdx.x * blockDim.x + threadIdx.x] = v + w;
}
