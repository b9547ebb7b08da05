#define HD __host__ __device__

HD inline int warpLane(int tid) { return tid % 32; }  // expect: lane-id-32
__device__ inline int get_warp_id() { return threadIdx.x >> 5; }  // expect: warp-id-32
__device__ inline int laneId() { return threadIdx.x & 0x1f; }  // expect: lane-id-32

__global__ void use_helpers(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = warpLane(threadIdx.x) + 100 * get_warp_id() + laneId();
}
