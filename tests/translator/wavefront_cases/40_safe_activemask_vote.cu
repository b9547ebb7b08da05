__global__ void clamp_outliers(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  if (__any_sync(__activemask(), v > 1e6f)) v = fminf(v, 1e6f);
  __syncwarp();
  x[i] = v;
}
