/*
 * cinn_emu_vector_types.h -- CUDA's built-in vector types, dim3 and make_*.
 *
 * Sizes and alignments are CUDA's (vector_types.h), because kernels rely on them: a
 * float4 load is a 16-byte access of a 16-byte-aligned address, a struct of float2s
 * has the GPU's layout, and reinterpret_cast between a float* and a float4* reads the
 * same bytes on both targets.  The 3-element types carry only their element's
 * alignment, as in CUDA.
 */
#ifndef CINN_EMU_VECTOR_TYPES_H
#define CINN_EMU_VECTOR_TYPES_H

#define CINN_EMU_VECTOR1(T, name, align)          \
    struct __attribute__((aligned(align))) name { \
        T x;                                      \
    };
#define CINN_EMU_VECTOR2(T, name, align)          \
    struct __attribute__((aligned(align))) name { \
        T x, y;                                   \
    };
#define CINN_EMU_VECTOR3(T, name) \
    struct name {                 \
        T x, y, z;                \
    };
#define CINN_EMU_VECTOR4(T, name, align)          \
    struct __attribute__((aligned(align))) name { \
        T x, y, z, w;                             \
    };

/* name1..4 with the alignments CUDA gives them: a1, a2, a4 for 1, 2 and 4 elements. */
#define CINN_EMU_VECTORS(T, name, a1, a2, a4)                                  \
    CINN_EMU_VECTOR1(T, name##1, a1)                                           \
    CINN_EMU_VECTOR2(T, name##2, a2)                                           \
    CINN_EMU_VECTOR3(T, name##3)                                               \
    CINN_EMU_VECTOR4(T, name##4, a4)                                           \
    inline name##1 make_##name##1(T x) { return name##1 {x}; }                 \
    inline name##2 make_##name##2(T x, T y) { return name##2 {x, y}; }         \
    inline name##3 make_##name##3(T x, T y, T z) { return name##3 {x, y, z}; } \
    inline name##4 make_##name##4(T x, T y, T z, T w) { return name##4 {x, y, z, w}; }

CINN_EMU_VECTORS(signed char, char, 1, 2, 4)
CINN_EMU_VECTORS(unsigned char, uchar, 1, 2, 4)
CINN_EMU_VECTORS(short, short, 2, 4, 8)
CINN_EMU_VECTORS(unsigned short, ushort, 2, 4, 8)
CINN_EMU_VECTORS(int, int, 4, 8, 16)
CINN_EMU_VECTORS(unsigned int, uint, 4, 8, 16)
CINN_EMU_VECTORS(long, long, 8, 16, 16)
CINN_EMU_VECTORS(unsigned long, ulong, 8, 16, 16)
CINN_EMU_VECTORS(long long, longlong, 8, 16, 16)
CINN_EMU_VECTORS(unsigned long long, ulonglong, 8, 16, 16)
CINN_EMU_VECTORS(float, float, 4, 8, 16)
CINN_EMU_VECTORS(double, double, 8, 16, 16)

#undef CINN_EMU_VECTORS
#undef CINN_EMU_VECTOR1
#undef CINN_EMU_VECTOR2
#undef CINN_EMU_VECTOR3
#undef CINN_EMU_VECTOR4

static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 as in CUDA");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 as in CUDA");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3 as in CUDA");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2 as in CUDA");
static_assert(sizeof(char3) == 3 && alignof(char4) == 4, "char3/char4 as in CUDA");

/* dim3: a uint3 whose missing components default to 1. */
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

#endif /* CINN_EMU_VECTOR_TYPES_H */
