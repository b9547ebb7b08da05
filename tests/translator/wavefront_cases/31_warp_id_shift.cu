// Each warp handles one row of a sparse matrix (CSR SpMV, "vector" kernel)
__global__ void spmv_csr_vector(int rows, const int* ptr, const int* cols, const float* vals, const float* x, float* y) {
  int thread_id = blockDim.x * blockIdx.x + threadIdx.x;
  int warp_id = thread_id >> 5;  // expect: warp-id-32
  int lane = thread_id & 31;  // expect: lane-id-32
  int row = warp_id;
  if (row >= rows) return;
  float sum = 0.f;
  for (int j = ptr[row] + lane; j < ptr[row + 1]; j += 32) sum += vals[j] * x[cols[j]];
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffff, sum, offset);  // expect: reduction-offset-16, full-mask-32
  if (lane == 0) y[row] = sum;
}
