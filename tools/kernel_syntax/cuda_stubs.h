// Declarations that let g++ parse the CUDA kernels for a syntax check on
// a machine without CUDA (tools/kernel_syntax/check.py). Nothing here runs.
#pragma once
#include "minmax.h"
#include <cmath>
#include <cstdint>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };
struct uint4 { unsigned x, y, z, w; };
uint4 make_uint4(unsigned, unsigned, unsigned, unsigned);
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
float4 make_float4(float, float, float, float);
struct double2 { double x, y; };
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
void __syncthreads();
void __syncwarp(unsigned = 0xffffffffu);
unsigned __activemask();
unsigned __ballot_sync(unsigned, int);
int __all_sync(unsigned, int);
int __any_sync(unsigned, int);
unsigned __match_any_sync(unsigned, unsigned);
unsigned __reduce_max_sync(unsigned, unsigned);
unsigned __reduce_add_sync(unsigned, unsigned);
unsigned __reduce_or_sync(unsigned, unsigned);
template <typename T> T __shfl_sync(unsigned, T, int, int = 32);
template <typename T> T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <typename T> T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <typename T> T __shfl_xor_sync(unsigned, T, int, int = 32);
#define MULTIRES_ATOMICS(T)                                                                   \
    T atomicAdd(T*, T);                                                                        \
    T atomicMax(T*, T);                                                                        \
    T atomicMin(T*, T);                                                                        \
    T atomicOr(T*, T);                                                                         \
    T atomicAnd(T*, T);                                                                        \
    T atomicExch(T*, T);                                                                       \
    T atomicCAS(T*, T, T);
MULTIRES_ATOMICS(int)
MULTIRES_ATOMICS(unsigned)
MULTIRES_ATOMICS(unsigned long long)
float atomicAdd(float*, float);
double atomicAdd(double*, double);
int __clz(int);
int __clzll(long long);
int __popc(unsigned);
int __popcll(unsigned long long);
int __ffs(int);
int __ffsll(long long);
unsigned __brev(unsigned);
unsigned __umulhi(unsigned, unsigned);
unsigned long long __umul64hi(unsigned long long, unsigned long long);
unsigned __float_as_uint(float);
float __uint_as_float(unsigned);
float __int_as_float(int);
int __float_as_int(float);
long long __double_as_longlong(double);
double __longlong_as_double(long long);
float __double2float_rn(double);
float __fdividef(float, float);
double __dmul_rn(double, double);
double __dadd_rn(double, double);
double __dsub_rn(double, double);
int __double2loint(double);
double __hiloint2double(int, int);
unsigned __funnelshift_r(unsigned, unsigned, unsigned);
void __threadfence();
long long clock64();
template <typename T> T __ldg(const T*);
using std::isfinite;
using std::isnan;
using std::isinf;
void sincospi(double, double*, double*);
void sincospif(float, float*, float*);
void sincos(double, double*, double*);
void sincosf(float, float*, float*);
