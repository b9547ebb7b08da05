// Mixture-of-experts router: one warp per token picks its top expert
#define WARP 32
__global__ void route_top1(const float* logits, int* expert, int tokens, int experts) {
  int warp_global = (blockIdx.x * blockDim.x + threadIdx.x) / WARP;  // expect: warp-id-32
  int lane = threadIdx.x % WARP;  // expect: lane-id-32
  if (warp_global >= tokens) return;
  const float* row = logits + warp_global * experts;
  float best = -1e30f;
  int arg = 0;
  for (int e = lane; e < experts; e += WARP) if (row[e] > best) { best = row[e]; arg = e; }
  for (int off = WARP / 2; off > 0; off /= 2) {  // expect: reduction-offset-16
    float b2 = __shfl_down_sync(0xffffffff, best, off);  // expect: full-mask-32
    int a2 = __shfl_down_sync(0xffffffff, arg, off);  // expect: full-mask-32
    if (b2 > best) { best = b2; arg = a2; }
  }
  if (lane == 0) expert[warp_global] = arg;
}
