__global__ void count_matches(const int* a, const int* b, int* matches, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int votes = __popc(__ballot_sync(0xffffffff, i < n && a[i] == b[i]));  // expect: popc-ballot, full-mask-32
  if ((threadIdx.x & 31) == 0) atomicAdd(matches, votes);  // expect: lane-id-32
}
