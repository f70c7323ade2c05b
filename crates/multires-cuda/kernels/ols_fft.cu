// Seed 001's SM-OLS: the whole overlap-save in one kernel. One block per
// (segment, group of filters): the segment's FFT is computed once in shared
// memory and kept; for each filter the spectrum product, the inverse FFT, the
// dropping of aliased samples and the post-processing happen in shared
// memory, and only the kept outputs reach global memory.
//
// The FFT is radix-2 in shared memory: decimation in frequency forward
// (natural order in, bit-reversed out), the product taken in bit-reversed
// order, decimation in time inverse (bit-reversed in, natural out), so no
// permutation pass is needed. Twiddles exp(-2 pi i k / twl) come from a table
// computed in float64 on the host.
//
// Each filter f computes r[u] = sum_i seg[u + i] g_f[i] for u in [0, V): its
// spectrum H_f (with 1/L folded in) holds only the bins of its band (a
// circular range [blo, blo + blen)), everything else being below rounding.
// Segment j starts at sample origin + j*stride - u0 and yields outputs
// c = j*stride + (u - u0) for u in [u0, u0 + count).

#define OLS_BLOCK 512

template <typename T>
__device__ __forceinline__ void fft_dif(cpx<T>* a, int L, const cpx<T>* __restrict__ tw, int twl) {
    for (int half = L >> 1; half >= 1; half >>= 1) {
        const int step = twl / (2 * half);
        for (int i = threadIdx.x; i < (L >> 1); i += blockDim.x) {
            const int j = i & (half - 1);
            const int p = ((i - j) << 1) + j;
            const int q = p + half;
            const cpx<T> u = a[p], v = a[q];
            a[p] = u + v;
            a[q] = (u - v) * tw[j * step];
        }
        __syncthreads();
    }
}

template <typename T>
__device__ __forceinline__ void ifft_dit(cpx<T>* a, int L, const cpx<T>* __restrict__ tw, int twl) {
    for (int half = 1; half < L; half <<= 1) {
        const int step = twl / (2 * half);
        for (int i = threadIdx.x; i < (L >> 1); i += blockDim.x) {
            const int j = i & (half - 1);
            const int p = ((i - j) << 1) + j;
            const int q = p + half;
            cpx<T> w = tw[j * step];
            w.im = -w.im;
            const cpx<T> t = a[q] * w;
            const cpx<T> u = a[p];
            a[p] = u + t;
            a[q] = u - t;
        }
        __syncthreads();
    }
}

template <typename T, bool CX, int OUT, bool DERIV>
__device__ __forceinline__ void ols_body(
    const T* __restrict__ xr, const T* __restrict__ xi, long long xlen, long long origin, int L, int log2l,
    int stride, int u0, int count, const cpx<T>* __restrict__ H, const long long* __restrict__ hoff,
    const int* __restrict__ blo, const int* __restrict__ blen, const int* __restrict__ frow, int nfilters,
    int fg, long long col_lo, long long col_hi, int hop, long long ncols_out, const cpx<T>* __restrict__ tw,
    int twl, void* __restrict__ out) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    cpx<T>* A = (cpx<T>*)smem_raw;
    cpx<T>* B = A + L;
    const long long j = blockIdx.x;
    const long long s0 = origin + j * stride - u0;
    for (int i = threadIdx.x; i < L; i += blockDim.x) {
        const long long s = s0 + i;
        T vr = 0, vi = 0;
        if (s >= 0 && s < xlen) {
            vr = xr[s];
            if (CX) vi = xi[s];
        }
        A[i] = mk(vr, vi);
    }
    __syncthreads();
    fft_dif(A, L, tw, twl);
    const int shift = 32 - log2l;
    for (int q = 0; q < fg; ++q) {
        const int f = blockIdx.y * fg + q;
        if (f >= nfilters) break;
        for (int i = threadIdx.x; i < L; i += blockDim.x) B[i] = mk((T)0, (T)0);
        __syncthreads();
        const cpx<T>* __restrict__ hf = H + hoff[f];
        const int lo = blo[f], n = blen[f];
        for (int b = threadIdx.x; b < n; b += blockDim.x) {
            const int k = (lo + b) & (L - 1);
            const int p = __brev(k) >> shift;
            B[p] = A[p] * hf[b];
        }
        __syncthreads();
        ifft_dit(B, L, tw, twl);
        const long long row = (long long)frow[f] * ncols_out;
        for (int u = u0 + threadIdx.x; u < u0 + count; u += blockDim.x) {
            const long long c = j * stride + (u - u0);
            if (c < col_lo || c >= col_hi) continue;
            const long long rel = c - col_lo;
            if (hop > 1 && rel % hop != 0) continue;
            cpx<T> v;
            if (DERIV) {
                if (col_hi - col_lo < 2) {
                    v = mk((T)0, (T)0);
                } else if (c == col_lo) {
                    v = B[u + 1] - B[u];
                } else if (c == col_hi - 1) {
                    v = B[u] - B[u - 1];
                } else {
                    v = B[u + 1] - B[u - 1];
                    v.re *= (T)0.5;
                    v.im *= (T)0.5;
                }
            } else {
                v = B[u];
            }
            store_value<T, OUT>(out, row + rel / hop, v.re, v.im);
        }
        __syncthreads();
    }
}

#define OLS(NAME, T, CX, OUT, DERIV)                                                                         \
    extern "C" __global__ void __launch_bounds__(OLS_BLOCK) NAME(                                            \
        const T* xr, const T* xi, long long xlen, long long origin, int L, int log2l, int stride, int u0,    \
        int count, const cpx<T>* H, const long long* hoff, const int* blo, const int* blen, const int* frow, \
        int nfilters, int fg, long long col_lo, long long col_hi, int hop, long long ncols_out,              \
        const cpx<T>* tw, int twl, void* out) {                                                              \
        ols_body<T, CX, OUT, DERIV>(xr, xi, xlen, origin, L, log2l, stride, u0, count, H, hoff, blo, blen,   \
                                    frow, nfilters, fg, col_lo, col_hi, hop, ncols_out, tw, twl, out);       \
    }
// The host appends the one instantiation it needs, e.g. `OLS(kernel, float, 0, 0, 0)`.
