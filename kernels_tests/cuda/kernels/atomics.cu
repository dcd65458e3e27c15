// Atomics of every type.  Each thread applies the same operations to shared totals; every
// result is independent of the order the threads run in (float values are multiples of
// 1/4, whose sums are exact), so both targets must match NumPy exactly.
//
// i32: add, sub, max, min, and, or, xor, CAS-loop product (wrapping)   (8 ints)
// u32: add, sub, max, min, and, or, xor, inc (wraps at 15), dec (at 9)  (9 unsigned)
// u64: add, max, min, and, or, xor, CAS-loop sum                        (7 unsigned long long)
// i64: max, min                                                         (2 long long)
// f32, f64: add
// tickets[atomicAdd(counter, 1)] += 1: every ticket is drawn exactly once;
// old_slots[i] = atomicExch(&slots[i], v / 2): the exchange returns the old value.
extern "C" __global__ void __launch_bounds__(256)
atomics_all(const int* __restrict__ values, int n, int* i32, unsigned int* u32,
            unsigned long long* u64, long long* i64, float* f32, double* f64,
            unsigned int* counter, int* tickets, float* slots, float* old_slots) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const int v = values[i];
    const unsigned int u = static_cast<unsigned int>(v) * 2654435761u;
    const unsigned long long w = static_cast<unsigned long long>(u) << 20 | static_cast<unsigned int>(i);
    atomicAdd(&i32[0], v);
    atomicSub(&i32[1], v);
    atomicMax(&i32[2], v);
    atomicMin(&i32[3], v);
    atomicAnd(&i32[4], v | 0x40);
    atomicOr(&i32[5], v);
    atomicXor(&i32[6], v);
    int seen = i32[7];
    int assumed;
    do {  // an atomic multiply built from compare-and-swap
        assumed = seen;
        const unsigned int product = static_cast<unsigned int>(assumed) * (2u * v + 1u);
        seen = atomicCAS(&i32[7], assumed, static_cast<int>(product));
    } while (seen != assumed);
    atomicAdd(&u32[0], u);
    atomicSub(&u32[1], u);
    atomicMax(&u32[2], u);
    atomicMin(&u32[3], u);
    atomicAnd(&u32[4], u | 0x10000u);
    atomicOr(&u32[5], u);
    atomicXor(&u32[6], u);
    atomicInc(&u32[7], 15u);
    atomicDec(&u32[8], 9u);
    atomicAdd(&u64[0], w);
    atomicMax(&u64[1], w);
    atomicMin(&u64[2], w);
    atomicAnd(&u64[3], w | 0x100000ull);
    atomicOr(&u64[4], w);
    atomicXor(&u64[5], w);
    unsigned long long seen64 = u64[6];
    unsigned long long assumed64;
    do {
        assumed64 = seen64;
        seen64 = atomicCAS(&u64[6], assumed64, assumed64 + w);
    } while (seen64 != assumed64);
    atomicMax(&i64[0], static_cast<long long>(v) - 500);
    atomicMin(&i64[1], static_cast<long long>(v) - 500);
    atomicAdd(&f32[0], v * 0.25f);
    atomicAdd(&f64[0], v * 0.25);
    atomicAdd(&tickets[atomicAdd(counter, 1u)], 1);
    old_slots[i] = atomicExch(&slots[i], v * 0.5f);
}
