struct WarpInfo {
  int lane;
  int warp;
};

__device__ WarpInfo warp_info() {
  WarpInfo info;
  info.lane = threadIdx.x % 32;  // expect: lane-id-32
  info.warp = threadIdx.x / 32;  // expect: warp-id-32
  return info;
}
