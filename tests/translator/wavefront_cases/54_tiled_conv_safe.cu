#define TILE_W 32
#define TILE_H 8
__global__ void conv_rows(const float* in, float* out, const float* k, int w, int h, int radius) {
  __shared__ float tile[TILE_H][TILE_W + 2 * 8];
  int x = blockIdx.x * TILE_W + threadIdx.x;
  int y = blockIdx.y * TILE_H + threadIdx.y;
  tile[threadIdx.y][threadIdx.x + 8] = (x < w && y < h) ? in[y * w + x] : 0.f;
  if (threadIdx.x < 8) {
    tile[threadIdx.y][threadIdx.x] = (x >= 8 && y < h) ? in[y * w + x - 8] : 0.f;
    tile[threadIdx.y][threadIdx.x + TILE_W + 8] = (x + TILE_W < w && y < h) ? in[y * w + x + TILE_W] : 0.f;
  }
  __syncthreads();
  float s = 0.f;
  for (int j = -radius; j <= radius; ++j) s += k[j + radius] * tile[threadIdx.y][threadIdx.x + 8 + j];
  if (x < w && y < h) out[y * w + x] = s;
}
