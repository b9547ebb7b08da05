// Segmented sum: lanes with the same key in a warp add up; the head lane writes
__global__ void segmented_sum(const int* keys, const float* vals, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane_id = threadIdx.x & 31;  // expect: lane-id-32
  int key = i < n ? keys[i] : -1;
  float v = i < n ? vals[i] : 0.f;
  int prev_key = __shfl_up_sync(0xffffffff, key, 1);  // expect: full-mask-32
  bool head = lane_id == 0 || prev_key != key;
  unsigned heads = __ballot_sync(0xffffffff, head);  // expect: ballot-32bit, full-mask-32
  unsigned below = heads & ((2u << lane_id) - 1);  // expect: lane-mask-32
  int my_head = 31 - __clz(below);  // expect: popc-ballot
  for (int d = 1; d < 32; d <<= 1) {  // expect: reduction-offset-16
    float o = __shfl_up_sync(0xffffffff, v, d);  // expect: full-mask-32
    if (lane_id - d >= my_head) v += o;
  }
  if (i < n && (lane_id == 31 || keys[i + 1] != key)) atomicAdd(&out[key], v);  // expect: lane-id-32
}
