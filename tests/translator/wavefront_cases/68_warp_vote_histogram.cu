// Warp-level histogram: lanes that share a bin are found with a ballot per bin
#define NBINS 16
__global__ void warp_histogram(const int* keys, int* hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int bin = i < n ? keys[i] % NBINS : -1;
  int lane = threadIdx.x & 31;  // expect: lane-id-32
  for (int b = 0; b < NBINS; ++b) {
    unsigned same = __ballot_sync(0xffffffff, bin == b);  // expect: ballot-32bit, full-mask-32
    if (lane == 0 && same) atomicAdd(&hist[b], __popc(same));  // expect: popc-ballot
  }
}
