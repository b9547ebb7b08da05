#define WARP_SIZE 32
#define LOG_WARP_SIZE 5

template <int BLOCK>
__global__ void block_exclusive_scan(const unsigned* in, unsigned* out) {
  __shared__ unsigned warp_totals[BLOCK / WARP_SIZE];
  unsigned tid = threadIdx.x;
  unsigned lane = tid & (WARP_SIZE - 1);  // expect: lane-id-32
  unsigned warp = tid >> LOG_WARP_SIZE;  // expect: warp-id-32
  unsigned v = in[blockIdx.x * BLOCK + tid];
  unsigned x = v;
  for (int d = 1; d < WARP_SIZE; d *= 2) {  // expect: reduction-offset-16
    unsigned y = __shfl_up_sync(0xffffffff, x, d);  // expect: full-mask-32
    if (lane >= d) x += y;
  }
  if (lane == WARP_SIZE - 1) warp_totals[warp] = x;  // expect: lane-id-32
  __syncthreads();
  if (warp == 0) {
    unsigned t = lane < BLOCK / WARP_SIZE ? warp_totals[lane] : 0;  // expect: warp-id-32
    for (int d = 1; d < WARP_SIZE; d *= 2) {  // expect: reduction-offset-16
      unsigned y = __shfl_up_sync(0xffffffff, t, d);  // expect: full-mask-32
      if (lane >= d) t += y;
    }
    if (lane < BLOCK / WARP_SIZE) warp_totals[lane] = t;  // expect: warp-id-32
  }
  __syncthreads();
  out[blockIdx.x * BLOCK + tid] = x - v + (warp > 0 ? warp_totals[warp - 1] : 0);
}
