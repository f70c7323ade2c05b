// Definitions that let g++ run a few of the codec's CUDA kernels on the
// CPU, a thread per CUDA thread and blocks one after another
// (tools/kernel_emu/rplan_check.sh): enough for kernels that use
// __syncthreads, shared memory declared in the kernel, atomics, and the
// warp intrinsics below for full warps that reach them together (a
// barrier a warp). A logic check before device time is spent, not a
// model of the GPU's timing or memory order.
#pragma once
#include "../kernel_syntax/minmax.h"
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <functional>
#include <thread>
#include <memory>
#include <vector>
#include <cstring>
#include <mutex>
#include <algorithm>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Shared memory: one copy a block, the block's threads run at once.
#define __shared__ static
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
struct double2 { double x, y; };
inline thread_local uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<>* emu_barrier = nullptr;
inline void __syncthreads() { emu_barrier->arrive_and_wait(); }
template <typename T> T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
using std::fmax;

// What the emulated kernels do not use, defined only so that the rest of
// the file compiles (reaching one is a trap).
#define EMU_NONE { __builtin_trap(); }
inline unsigned __activemask() EMU_NONE
inline int __any_sync(unsigned, int) EMU_NONE
inline unsigned __match_any_sync(unsigned, unsigned) EMU_NONE
inline unsigned __reduce_add_sync(unsigned, unsigned) EMU_NONE
inline unsigned __reduce_or_sync(unsigned, unsigned) EMU_NONE
template <typename T> T __shfl_xor_sync(unsigned, T, int, int = 32) EMU_NONE
template <typename T> T atomicMin(T*, T) EMU_NONE
template <typename T> T atomicAnd(T*, T) EMU_NONE
template <typename T> T atomicExch(T*, T) EMU_NONE
template <typename T> T atomicCAS(T*, T, T) EMU_NONE
inline float atomicAdd(float*, float) EMU_NONE
inline int __popcll(unsigned long long) EMU_NONE
inline int __ffsll(long long) EMU_NONE
inline unsigned __umulhi(unsigned, unsigned) EMU_NONE
inline unsigned long long __umul64hi(unsigned long long, unsigned long long) EMU_NONE
inline float __int_as_float(int) EMU_NONE
inline int __float_as_int(float) EMU_NONE
inline float __double2float_rn(double) EMU_NONE
inline float __fdividef(float, float) EMU_NONE
inline long long clock64() EMU_NONE
template <typename T> T __ldg(const T*) EMU_NONE
inline void sincospi(double, double*, double*) EMU_NONE
inline void sincospif(float, float*, float*) EMU_NONE
inline void sincos(double, double*, double*) EMU_NONE
inline void sincosf(float, float*, float*) EMU_NONE

// Warps: a barrier and an exchange row each (full warps only).
inline std::vector<std::barrier<>*> emu_warps;
inline unsigned long long emu_xchg[64][32];
inline void __syncwarp(unsigned = 0xffffffffu) { emu_warps[threadIdx.x / 32]->arrive_and_wait(); }
template <typename T> T emu_from(T v, int src) {
    unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    emu_xchg[w][lane] = b;
    __syncwarp();
    unsigned long long r = emu_xchg[w][src & 31];
    __syncwarp();
    T out;
    std::memcpy(&out, &r, sizeof(T));
    return out;
}
inline unsigned __ballot_sync(unsigned, int p) {
    unsigned m = 0;
    for (int l = 0; l < 32; l++) m |= (emu_from<int>(p != 0, l) ? 1u : 0u) << l;
    return m;
}
inline int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == 0xffffffffu; }
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
    unsigned m = 0;
    for (int l = 0; l < 32; l++) m = std::max(m, emu_from(v, l));
    return m;
}
template <typename T> T __shfl_sync(unsigned, T v, int src, int = 32) { return emu_from(v, src); }
template <typename T> T __shfl_up_sync(unsigned, T v, unsigned d, int = 32) {
    unsigned lane = threadIdx.x % 32;
    return emu_from(v, lane >= d ? lane - d : lane);
}
template <typename T> T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) {
    unsigned lane = threadIdx.x % 32;
    return emu_from(v, lane + d < 32 ? lane + d : lane);
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    unsigned long long o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (o < v && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
inline double atomicAdd(double* p, double v) {
    static std::mutex m;
    std::lock_guard<std::mutex> g(m);
    double o = *p;
    *p = o + v;
    return o;
}
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (sh & 31));
}
inline double __dsub_rn(double a, double b) { return a - b; }
inline int __double2loint(double d) { unsigned long long u; std::memcpy(&u, &d, 8); return (int)(unsigned)u; }
inline double __hiloint2double(int hi, int lo) {
    unsigned long long u = ((unsigned long long)(unsigned)hi << 32) | (unsigned)lo;
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}
using std::isfinite;
using std::isnan;
using std::isinf;

// Runs `kernel` over `grid` (x, y) blocks of `threads` threads.
inline void emu_launch(unsigned gx, unsigned gy, unsigned threads, const std::function<void()>& kernel) {
    gridDim = {gx, gy, 1};
    blockDim = {threads, 1, 1};
    for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++) {
            std::barrier<> bar((std::ptrdiff_t)threads);
            emu_barrier = &bar;
            std::vector<std::unique_ptr<std::barrier<>>> warps;
            emu_warps.clear();
            for (unsigned w = 0; w < (threads + 31) / 32; w++) {
                warps.push_back(std::make_unique<std::barrier<>>((std::ptrdiff_t)std::min(32u, threads - 32 * w)));
                emu_warps.push_back(warps.back().get());
            }
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < threads; t++)
                ts.emplace_back([&, t] {
                    threadIdx = {t, 0, 0};
                    blockIdx = {x, y, 0};
                    kernel();
                    // A thread that returned early leaves the barrier's count.
                    emu_barrier->arrive_and_drop();
                    emu_warps[t / 32]->arrive_and_drop();
                });
            for (auto& t : ts) t.join();
        }
}
