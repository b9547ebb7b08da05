__device__ __forceinline__ unsigned lane_id_ptx() {
  unsigned ret;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(ret));
  return ret;
}

__global__ void neighbour_swap(float* x) {
  unsigned laneid = lane_id_ptx();
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  float other = __shfl_sync(0xffffffff, v, laneid ^ 1);  // expect: full-mask-32
  x[blockIdx.x * blockDim.x + threadIdx.x] = (laneid & 1) ? other : v;
}
