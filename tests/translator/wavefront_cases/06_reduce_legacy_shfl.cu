// Pre-CUDA-9 style: no mask
__device__ inline double warp_reduce_double(double v) {
  for (int i = 16; i >= 1; i /= 2) v += __shfl_down(v, i);  // expect: reduction-offset-16
  return v;
}
