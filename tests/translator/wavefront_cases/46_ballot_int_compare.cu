__global__ void all_converged(const float* residual, int* done, float tol, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int vote = __ballot_sync(0xffffffff, i >= n || fabsf(residual[i]) < tol);  // expect: ballot-32bit, full-mask-32
  if (vote == 0xffffffff && threadIdx.x == 0) atomicAdd(done, 1);
}
