// Shared by every multires kernel (NVRTC has no in-memory headers: the host
// prepends this text to each kernel file before compiling).

template <typename T> struct __align__(2 * sizeof(T)) cpx {
    T re, im;
};

template <typename T> __device__ __forceinline__ cpx<T> mk(T re, T im) {
    cpx<T> c;
    c.re = re;
    c.im = im;
    return c;
}
template <typename T> __device__ __forceinline__ cpx<T> operator+(cpx<T> a, cpx<T> b) {
    return mk(a.re + b.re, a.im + b.im);
}
template <typename T> __device__ __forceinline__ cpx<T> operator-(cpx<T> a, cpx<T> b) {
    return mk(a.re - b.re, a.im - b.im);
}
template <typename T> __device__ __forceinline__ cpx<T> operator*(cpx<T> a, cpx<T> b) {
    return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename T> __device__ __forceinline__ cpx<T> conj_mul(cpx<T> a, cpx<T> b) {
    // a * conj(b)
    return mk(a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im);
}

// Output kinds, as multires::cwt::OutputKind / FirPost: the store step.
#define OUT_COMPLEX 0
#define OUT_MAGNITUDE 1
#define OUT_POWER 2
#define OUT_PHASE 3
#define OUT_REAL 4
// Magnitude or power stored as 16-bit floats (multires::cwt::HalfFloat),
// rounded to nearest even once, at the store.
#define OUT_MAGNITUDE_F16 5
#define OUT_POWER_F16 6
#define OUT_MAGNITUDE_BF16 7
#define OUT_POWER_BF16 8

__device__ __forceinline__ unsigned short to_f16_bits(float v) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}
// Round to nearest even on the upper half of the float32; NaN stays a
// (quiet) NaN, as the half crate's conversion on the host.
__device__ __forceinline__ unsigned short to_bf16_bits(float v) {
    unsigned int b = __float_as_uint(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (unsigned short)(b >> 16);
}

template <typename T, int OUT> __device__ __forceinline__ void store_value(void* out, long long idx, T re, T im) {
    if (OUT == OUT_COMPLEX) {
        ((cpx<T>*)out)[idx] = mk(re, im);
    } else if (OUT == OUT_MAGNITUDE) {
        ((T*)out)[idx] = sqrt(re * re + im * im);
    } else if (OUT == OUT_POWER) {
        ((T*)out)[idx] = re * re + im * im;
    } else if (OUT == OUT_PHASE) {
        ((T*)out)[idx] = atan2(im, re);
    } else if (OUT >= OUT_MAGNITUDE_F16) {
        T p = re * re + im * im;
        float v = (float)((OUT == OUT_MAGNITUDE_F16 || OUT == OUT_MAGNITUDE_BF16) ? sqrt(p) : p);
        ((unsigned short*)out)[idx] = OUT <= OUT_POWER_F16 ? to_f16_bits(v) : to_bf16_bits(v);
    } else {
        ((T*)out)[idx] = re;
    }
}

// Two-accumulator sum for float32 over long masks: partial sums of a few
// dozen taps are added into a Kahan-compensated total.
template <typename T> struct Compensated {
    T sum, c;
    __device__ __forceinline__ void init() { sum = 0; c = 0; }
    __device__ __forceinline__ void add(T v) {
        T y = v - c;
        T t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
};
