// stackcheck test kernel: tiny on purpose
__global__ void k(float *a) { a[threadIdx.x] *= 2.0f; }
