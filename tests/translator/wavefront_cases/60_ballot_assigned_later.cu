__global__ void active_lanes(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned mask;
  mask = __ballot_sync(0xffffffff, i < n && x[i]);  // expect: ballot-32bit, full-mask-32
  out[blockIdx.x] = __popc(mask);  // expect: popc-ballot
}
