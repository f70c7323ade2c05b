// The DWT on the GPU (seed dwt-matrix-lattice, section 4.2), equal to
// PyWavelets: every extension mode as index arithmetic (ext_at), batches of
// rows (one signal per row, rows of equal length, contiguous).
//
// Forward, output o of a row reads x[first + j], j < F, first = s0 + 2 o - (F - 1)
// (s0 = F/2 for periodization, else 1), against the reversed analysis filters.
//   DWT_M(G): matrix with wrapping; G = 1: one thread per output element, the
//     filter picked by parity (gpu_dwt_m1_ww_ref); G = 2: one thread per
//     (cA, cD) pair (m2_ww); G = 4: two pairs (m4_ww).
//   DWT_EXTEND + DWT_NW(G): the row first extended by the mode on the
//     device (2 no + F - 2 samples from `first(0)`), then a loop without
//     any test (m2_nw, m4_nw).
//   DWT_FUSED: the small levels of a wavedec, one block per row, the
//     approximation kept in shared memory from level to level.
// Inverse (PyWavelets' idwt): out[n] = y[m], m = n + shift (mod 2 nc for
// periodization), y the synthesis of upsampled (a, d); coefficients outside
// [0, nc) are zero, or wrap for periodization.
//   IDWT(G): one thread per G outputs; IDWT_FUSED: the small (coarsest)
//   levels of a waverec in shared memory, one block per row.

#define MODE_ZERO 0
#define MODE_CONSTANT 1
#define MODE_SYMMETRIC 2
#define MODE_REFLECT 3
#define MODE_PERIODIC 4
#define MODE_SMOOTH 5
#define MODE_ANTISYMMETRIC 6
#define MODE_ANTIREFLECT 7
#define MODE_PERIODIZATION 8

#define MAX_TAPS 128

// x[t] of the row x (length n) extended by MODE, for any integer t.
template <typename T, int MODE>
__device__ __forceinline__ T ext_at(const T* x, long long n, long long t) {
    if (t >= 0 && t < n) return x[t];
    if (MODE == MODE_ZERO) return (T)0;
    if (MODE == MODE_PERIODIC) {
        long long r = t % n;
        if (r < 0) r += n;
        return x[r];
    }
    if (MODE == MODE_PERIODIZATION) {
        const long long np = n + (n & 1);
        long long r = t % np;
        if (r < 0) r += np;
        return x[r < n - 1 ? r : n - 1];
    }
    // Mirror-symmetric modes: the right edge is the left edge of the reversed row.
    const bool rev = t >= n;
    const long long m = rev ? t - (n - 1) : -t;  // >= 1
#define IDX(i) (rev ? (n - 1 - (i)) : (i))
    if (MODE == MODE_CONSTANT) return x[IDX(0)];
    if (MODE == MODE_SYMMETRIC || MODE == MODE_ANTISYMMETRIC) {
        const long long r = (m - 1) % (2 * n);
        if (r < n) return MODE == MODE_ANTISYMMETRIC ? -x[IDX(r)] : x[IDX(r)];
        return x[IDX(2 * n - 1 - r)];
    }
    if (MODE == MODE_REFLECT) {
        if (n == 1) return x[IDX(0)];
        const long long r = m % (2 * n - 2);
        return x[IDX(r < n ? r : 2 * n - 2 - r)];
    }
    if (MODE == MODE_SMOOTH) {
        if (n < 2) return x[IDX(0)];
        const T mf = (T)m;
        return ((T)1 + mf) * x[IDX(0)] + (-mf) * x[IDX(1)];
    }
    // Antireflect: block q of n - 1 samples mirrors about x0 + q (x0 - x_{n-1}).
    if (n == 1) return x[IDX(0)];
    const long long q = (m - 1) / (n - 1);
    const long long r = (m - 1) % (n - 1) + 1;
    const T qf = (T)q;
    if ((q & 1) == 0) return ((T)2 + qf) * x[IDX(0)] + (-qf) * x[IDX(n - 1)] + (T)(-1) * x[IDX(r)];
    return ((T)1 + qf) * x[IDX(0)] + (-qf - (T)1) * x[IDX(n - 1)] + x[IDX(n - 1 - r)];
#undef IDX
}

// Analysis filters in shared memory: reversed dec_lo then reversed dec_hi.
template <typename T>
__device__ __forceinline__ void load_filters(const T* __restrict__ f, int count, T* s) {
    for (int i = threadIdx.x; i < count; i += blockDim.x) s[i] = f[i];
    __syncthreads();
}

// One output (cA if hi == 0) of a row: the dot product over F taps.
template <typename T, int MODE>
__device__ __forceinline__ T tap_sum(const T* x, long long n, long long first, const T* f, int F) {
    T acc = 0;
    if (first >= 0 && first + F <= n) {
        for (int j = 0; j < F; ++j) acc = x[first + j] * f[j] + acc;
    } else {
        for (int j = 0; j < F; ++j) acc = ext_at<T, MODE>(x, n, first + j) * f[j] + acc;
    }
    return acc;
}

// Grid: x covers the outputs of a row (per G), y = rows.
template <typename T, int MODE, int G>
__device__ __forceinline__ void dwt_m_body(const T* __restrict__ x, long long n, long long no, int s0,
                                           const T* __restrict__ filt, int F, T* __restrict__ ca,
                                           T* __restrict__ cd) {
    __shared__ T f[2 * MAX_TAPS];
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.y;
    const T* xr = x + row * n;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (G == 1) {
        // One output element: even t gives cA, odd t cD (the filter chosen by parity).
        const long long o = t >> 1;
        if (o >= no) return;
        const int hi = (int)(t & 1);
        const T v = tap_sum<T, MODE>(xr, n, s0 + 2 * o - (F - 1), f + hi * F, F);
        (hi ? cd : ca)[row * no + o] = v;
    } else {
        const long long o0 = t * (G / 2);
        for (int k = 0; k < G / 2; ++k) {
            const long long o = o0 + k;
            if (o >= no) return;
            const long long first = s0 + 2 * o - (F - 1);
            T a = 0, d = 0;
            if (first >= 0 && first + F <= n) {
                for (int j = 0; j < F; ++j) {
                    const T v = xr[first + j];
                    a = v * f[j] + a;
                    d = v * f[F + j] + d;
                }
            } else {
                for (int j = 0; j < F; ++j) {
                    const T v = ext_at<T, MODE>(xr, n, first + j);
                    a = v * f[j] + a;
                    d = v * f[F + j] + d;
                }
            }
            ca[row * no + o] = a;
            cd[row * no + o] = d;
        }
    }
}

// The extended row: xe[i] = ext(x, first(0) + i), i < 2 no + F - 2.
template <typename T, int MODE>
__device__ __forceinline__ void extend_body(const T* __restrict__ x, long long n, long long ne, long long first,
                                            T* __restrict__ xe) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ne) return;
    const long long row = blockIdx.y;
    xe[row * ne + i] = ext_at<T, MODE>(x + row * n, n, first + i);
}

template <typename T, int G>
__device__ __forceinline__ void dwt_nw_body(const T* __restrict__ xe, long long ne, long long no,
                                            const T* __restrict__ filt, int F, T* __restrict__ ca,
                                            T* __restrict__ cd) {
    __shared__ T f[2 * MAX_TAPS];
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.y;
    const T* xr = xe + row * ne;
    const long long o0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * (G / 2);
    if (o0 >= no) return;
    if (G == 4 && o0 + 1 < no) {
        // Two pairs share F - 2 of their samples.
        T a0 = 0, d0 = 0, a1 = 0, d1 = 0;
        const T* w = xr + 2 * o0;
        for (int j = 0; j < F; ++j) {
            const T v0 = w[j], v1 = w[j + 2];
            a0 = v0 * f[j] + a0;
            d0 = v0 * f[F + j] + d0;
            a1 = v1 * f[j] + a1;
            d1 = v1 * f[F + j] + d1;
        }
        ca[row * no + o0] = a0;
        cd[row * no + o0] = d0;
        ca[row * no + o0 + 1] = a1;
        cd[row * no + o0 + 1] = d1;
        return;
    }
    for (int k = 0; k < G / 2 && o0 + k < no; ++k) {
        const T* w = xr + 2 * (o0 + k);
        T a = 0, d = 0;
        for (int j = 0; j < F; ++j) {
            a = w[j] * f[j] + a;
            d = w[j] * f[F + j] + d;
        }
        ca[row * no + o0 + k] = a;
        cd[row * no + o0 + k] = d;
    }
}

// Synthesis: output n of a level with nc coefficients, filters (rec_lo,
// rec_hi) in natural order.
template <typename T>
__device__ __forceinline__ T synth_at(const T* a, const T* d, long long nc, long long n, int shift, bool periodic,
                                      const T* lo, const T* hi, int F) {
    long long m = n + shift;
    if (periodic) {
        m %= 2 * nc;
        if (m < 0) m += 2 * nc;
    }
    const long long i = m >> 1;
    const int ph = (int)(m & 1);
    T acc = 0;
    for (int k = 0; k < F / 2; ++k) {
        long long q = i - k;
        if (periodic) {
            q %= nc;
            if (q < 0) q += nc;
        } else if (q < 0 || q >= nc) {
            continue;
        }
        acc = a[q] * lo[2 * k + ph] + d[q] * hi[2 * k + ph] + acc;
    }
    return acc;
}

template <typename T, int G>
__device__ __forceinline__ void idwt_body(const T* __restrict__ a, const T* __restrict__ d, long long nc,
                                          long long a_stride, long long nout, int shift, int periodic,
                                          const T* __restrict__ filt, int F, T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.y;
    const long long n0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * G;
    for (int k = 0; k < G; ++k) {
        const long long n = n0 + k;
        if (n >= nout) return;
        out[row * nout + n] = synth_at(a + row * a_stride, d + row * nc, nc, n, shift, periodic != 0, f, f + F, F);
    }
}

// Levels lv = 0.. of a wavedec in one block per row, in shared memory.
// lens[lv]: the input length of level lv (lens[levels] the final cA's);
// doff[lv]: where level lv's cD block starts in `out` (rows x lens[lv+1]);
// aoff: where the final cA block starts.
template <typename T, int MODE>
__device__ __forceinline__ void dwt_fused_body(const T* __restrict__ x, int levels, const long long* __restrict__ lens,
                                               const long long* __restrict__ doff, long long aoff, int s0,
                                               const T* __restrict__ filt, int F, int cap, T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* A = (T*)dwt_smem;
    T* B = A + cap;
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.x;
    const long long n0 = lens[0];
    for (long long i = threadIdx.x; i < n0; i += blockDim.x) A[i] = x[row * n0 + i];
    __syncthreads();
    for (int lv = 0; lv < levels; ++lv) {
        const long long n = lens[lv], no = lens[lv + 1];
        for (long long o = threadIdx.x; o < no; o += blockDim.x) {
            const long long first = s0 + 2 * o - (F - 1);
            T a = 0, d = 0;
            for (int j = 0; j < F; ++j) {
                const T v = ext_at<T, MODE>(A, n, first + j);
                a = v * f[j] + a;
                d = v * f[F + j] + d;
            }
            B[o] = a;
            out[doff[lv] + row * no + o] = d;
        }
        __syncthreads();
        T* t = A;
        A = B;
        B = t;
    }
    const long long na = lens[levels];
    for (long long i = threadIdx.x; i < na; i += blockDim.x) out[aoff + row * na + i] = A[i];
}

// Coarsest levels of a waverec in one block per row: a starts as the cA
// block; level lv combines it (cut to ncs[lv]) with the cD block at
// doff[lv] (ncs[lv] per row) into nouts[lv] samples.
template <typename T>
__device__ __forceinline__ void idwt_fused_body(const T* __restrict__ ca, long long na, int levels,
                                                const long long* __restrict__ ncs,
                                                const long long* __restrict__ nouts,
                                                const long long* __restrict__ doff, const T* __restrict__ coeffs,
                                                int shift, int periodic, const T* __restrict__ filt, int F, int cap,
                                                T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* A = (T*)dwt_smem;
    T* B = A + cap;
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.x;
    for (long long i = threadIdx.x; i < na; i += blockDim.x) A[i] = ca[row * na + i];
    __syncthreads();
    long long nlast = 0;
    for (int lv = 0; lv < levels; ++lv) {
        const long long nc = ncs[lv], no = nouts[lv];
        const T* d = coeffs + doff[lv] + row * nc;
        for (long long n = threadIdx.x; n < no; n += blockDim.x) {
            long long m = n + shift;
            if (periodic) {
                m %= 2 * nc;
                if (m < 0) m += 2 * nc;
            }
            const long long i = m >> 1;
            const int ph = (int)(m & 1);
            T acc = 0;
            for (int k = 0; k < F / 2; ++k) {
                long long q = i - k;
                if (periodic) {
                    q %= nc;
                    if (q < 0) q += nc;
                } else if (q < 0 || q >= nc) {
                    continue;
                }
                acc = A[q] * f[2 * k + ph] + d[q] * f[F + 2 * k + ph] + acc;
            }
            B[n] = acc;
        }
        __syncthreads();
        T* t = A;
        A = B;
        B = t;
        nlast = no;
    }
    for (long long i = threadIdx.x; i < nlast; i += blockDim.x) out[row * nlast + i] = A[i];
}

#define DWT_M(NAME, T, MODE, G)                                                                                   \
    extern "C" __global__ void NAME(const T* x, long long n, long long no, int s0, const T* filt, int F, T* ca,   \
                                    T* cd) {                                                                      \
        dwt_m_body<T, MODE, G>(x, n, no, s0, filt, F, ca, cd);                                                    \
    }
#define DWT_EXTEND(NAME, T, MODE)                                                                                 \
    extern "C" __global__ void NAME(const T* x, long long n, long long ne, long long first, T* xe) {              \
        extend_body<T, MODE>(x, n, ne, first, xe);                                                                \
    }
#define DWT_NW(NAME, T, G)                                                                                        \
    extern "C" __global__ void NAME(const T* xe, long long ne, long long no, const T* filt, int F, T* ca, T* cd) { \
        dwt_nw_body<T, G>(xe, ne, no, filt, F, ca, cd);                                                           \
    }
#define IDWT(NAME, T, G)                                                                                          \
    extern "C" __global__ void NAME(const T* a, const T* d, long long nc, long long a_stride, long long nout,      \
                                    int shift, int periodic, const T* filt, int F, T* out) {                     \
        idwt_body<T, G>(a, d, nc, a_stride, nout, shift, periodic, filt, F, out);                                 \
    }
#define DWT_FUSED(NAME, T, MODE)                                                                                  \
    extern "C" __global__ void NAME(const T* x, int levels, const long long* lens, const long long* doff,         \
                                    long long aoff, int s0, const T* filt, int F, int cap, T* out) {              \
        dwt_fused_body<T, MODE>(x, levels, lens, doff, aoff, s0, filt, F, cap, out);                              \
    }
#define IDWT_FUSED(NAME, T)                                                                                       \
    extern "C" __global__ void NAME(const T* ca, long long na, int levels, const long long* ncs,                  \
                                    const long long* nouts, const long long* doff, const T* coeffs, int shift,    \
                                    int periodic, const T* filt, int F, int cap, T* out) {                        \
        idwt_fused_body<T>(ca, na, levels, ncs, nouts, doff, coeffs, shift, periodic, filt, F, cap, out);         \
    }
// The host appends the instantiation it needs, e.g. `DWT_M(kernel, float, 8, 2)`.
