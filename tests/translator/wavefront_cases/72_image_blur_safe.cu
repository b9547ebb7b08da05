// 2-D stencil with 32x8 blocks; threadIdx.x % 32 never appears, but 32 is everywhere
#define BX 32
#define BY 8
__global__ void box_blur(const unsigned char* src, unsigned char* dst, int w, int h) {
  __shared__ unsigned char tile[BY + 2][BX + 2];
  int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
  tile[threadIdx.y + 1][threadIdx.x + 1] = src[cy * w + cx];
  if (threadIdx.x == 0) tile[threadIdx.y + 1][0] = src[cy * w + max(cx - 1, 0)];
  if (threadIdx.x == BX - 1) tile[threadIdx.y + 1][BX + 1] = src[cy * w + min(cx + 1, w - 1)];
  __syncthreads();
  int s = 0;
  for (int dy = 0; dy < 3; ++dy) for (int dx = 0; dx < 3; ++dx) s += tile[threadIdx.y + dy][threadIdx.x + dx];
  if (x < w && y < h) dst[y * w + x] = s / 9;
}
