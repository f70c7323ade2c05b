// The undecimated transforms' level (dwt::swt::atrous_level on the CPU):
// both filters of a bank upsampled by s, circularly over rows of n,
//   a[o] = sum_m lo[m] x[(o + off - m s) mod n],  d[o] likewise with hi,
// the taps summed in ascending order from zero and compiled without FMA
// contraction, so that float64 results equal the CPU's bit for bit.
// pywt's swt level: off = taps s / 2; the MODWT: off = 0 (causal).
// ATROUS_SUM: the MODWT's inverse level, y = sum_m f[m] v[(o + off - m s)]
// + sum_m g[m] w[(o + off - m s)], each sum as above, then their sum.

template <typename T>
__device__ __forceinline__ T atrous_sum(const T* row, long long n, long long base, long long step,
                                        const T* f, int taps) {
    T acc = (T)0;
    long long j = base;
    for (int m = 0; m < taps; ++m) {
        acc = acc + f[m] * row[j];
        j -= step;
        if (j < 0) j += n;
    }
    return acc;
}

#define ATROUS(name, T)                                                                          \
    extern "C" __global__ void name(const T* __restrict__ x, long long n, long long off,         \
                                    long long s, const T* __restrict__ lo,                       \
                                    const T* __restrict__ hi, int taps, T* __restrict__ a,       \
                                    T* __restrict__ d) {                                         \
        const long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;                   \
        if (o >= n) return;                                                                      \
        const long long row = blockIdx.y;                                                        \
        const T* r = x + row * n;                                                                \
        const long long base = (o + off % n) % n, step = s % n;                                  \
        a[row * n + o] = atrous_sum<T>(r, n, base, step, lo, taps);                              \
        d[row * n + o] = atrous_sum<T>(r, n, base, step, hi, taps);                              \
    }

#define ATROUS_SUM(name, T)                                                                      \
    extern "C" __global__ void name(const T* __restrict__ v, const T* __restrict__ w,           \
                                    long long n, long long off, long long s,                     \
                                    const T* __restrict__ f, const T* __restrict__ g, int taps,  \
                                    T* __restrict__ y) {                                         \
        const long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;                   \
        if (o >= n) return;                                                                      \
        const long long row = blockIdx.y;                                                        \
        const long long base = (o + off % n) % n, step = s % n;                                  \
        const T p = atrous_sum<T>(v + row * n, n, base, step, f, taps);                          \
        const T q = atrous_sum<T>(w + row * n, n, base, step, g, taps);                          \
        y[row * n + o] = p + q;                                                                  \
    }
