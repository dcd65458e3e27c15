// Every thread of a 3-D grid of 3-D blocks writes 10 ints at its global linear index:
// its block and thread coordinates, its lane and linear index in the block (CUDA
// linearises x, then y, then z), and gridDim and blockDim packed as x | y << 8 | z << 16.
extern "C" __global__ void coordinates(int* __restrict__ out) {
    const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int index = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
    int* o = out + 10 * index;
    o[0] = blockIdx.x;
    o[1] = blockIdx.y;
    o[2] = blockIdx.z;
    o[3] = threadIdx.x;
    o[4] = threadIdx.y;
    o[5] = threadIdx.z;
    o[6] = static_cast<int>(thread % warpSize);
    o[7] = static_cast<int>(thread);
    o[8] = gridDim.x | gridDim.y << 8 | gridDim.z << 16;
    o[9] = blockDim.x | blockDim.y << 8 | blockDim.z << 16;
}
