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

template <typename T, int OUT> __device__ __forceinline__ void store_value(void* out, long long idx, T re, T im) {
    if (OUT == OUT_COMPLEX) {
        ((cpx<T>*)out)[idx] = mk(re, im);
    } else if (OUT == OUT_MAGNITUDE) {
        ((T*)out)[idx] = sqrt(re * re + im * im);
    } else if (OUT == OUT_POWER) {
        ((T*)out)[idx] = re * re + im * im;
    } else if (OUT == OUT_PHASE) {
        ((T*)out)[idx] = atan2(im, re);
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
