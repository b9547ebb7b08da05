#define EMPTY_KEY 0xffffffffu
struct Entry { unsigned key; float value; };
__global__ void lookup(const Entry* table, unsigned capacity, const unsigned* queries, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned q = queries[i];
  unsigned slot = (q * 2654435761u) & (capacity - 1);
  while (table[slot].key != EMPTY_KEY) {
    if (table[slot].key == q) { out[i] = table[slot].value; return; }
    slot = (slot + 1) & (capacity - 1);
  }
  out[i] = -1.f;
}
