// Seed 001's SM-OLS: the whole overlap-save in one kernel. One block per
// (segment, group of filters): the segment's FFT is computed once in shared
// memory and kept; for each filter the spectrum product, the inverse FFT, the
// dropping of aliased samples and the post-processing happen in shared
// memory, and only the kept outputs reach global memory.
//
// The FFT works in shared memory, radix-8 passes in registers: decimation in frequency forward
// (natural order in, bit-reversed out), the product taken in bit-reversed
// order, decimation in time inverse (bit-reversed in, natural out), so no
// permutation pass is needed. Twiddles exp(-2 pi i k / twl) come from a table
// computed in float64 on the host.
//
// Each filter f computes r[u] = sum_i seg[u + i] g_f[i] for u in [0, V): its
// spectrum H_f (with 1/L folded in) holds only the bins of its band (a
// circular range [blo, blo + blen)), everything else being below rounding;
// a wide band is stored whole in bit-reversed order instead (blen < 0).
// Segment j starts at sample origin + j*stride - u0 and yields outputs
// c = j*stride + (u - u0) for u in [u0, u0 + count).


// Shared-memory slot of element p: an XOR swizzle of the low bits by the
// row, so that both access shapes of the FFT are free of bank conflicts:
// consecutive elements (wide passes, loads, stores) stay a permutation of
// one row, and the narrow passes' radix-8 units (8 consecutive elements per
// thread) land in distinct banks. A row is 128 bytes: 16 complex floats or
// 8 complex doubles.
template <typename T> __device__ __forceinline__ int swz(int p) {
    return sizeof(T) == 4 ? p ^ ((p >> 4) & 7) : p ^ ((p >> 3) & 7);
}

// base * exp(-2 pi i m / n2) for n2 in {2, 4, 8}: the twiddles of a radix-8
// unit are three table values (one per stage) times these constants, so a
// unit reads 3 twiddles instead of 7.
template <typename T> __device__ __forceinline__ cpx<T> rotate(cpx<T> base, int m, int n2) {
    if (m == 0) return base;
    if (n2 == 4 || m == 2) return mk(base.im, -base.re);
    const T r = (T)0.70710678118654752440;
    if (m == 1) return mk((base.re + base.im) * r, (base.im - base.re) * r);
    return mk((base.im - base.re) * r, -(base.re + base.im) * r);
}

// R = 2^r consecutive radix-2 stages fused into one pass: each work unit
// holds R elements b + j + k Q (k < R) in registers, so a pass costs one
// read and one write of shared memory instead of r. DIF stages go from the
// widest half down; DIT stages from the narrowest up.
template <typename T, int R>
__device__ __forceinline__ void dif_pass(cpx<T>* a, int L, int H, const cpx<T>* __restrict__ tw, int twl, int tid,
                                         int nth) {
    // Halves H, H/2, ..., H/(R/2); block span 2H, element spacing Q.
    const int Q = (2 * H) / R;
    for (int i = tid; i < L / R; i += nth) {
        const int j = i % Q;
        const int b = (i / Q) * (R * Q);
        cpx<T> v[R];
#pragma unroll
        for (int k = 0; k < R; ++k) v[k] = a[swz<T>(b + j + k * Q)];
#pragma unroll
        for (int s = R / 2; s >= 1; s >>= 1) {
            const cpx<T> base = tw[j * (twl / (2 * Q * s))];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if ((k & (2 * s - 1)) < s) {
                    const cpx<T> u = v[k], w = v[k + s];
                    v[k] = u + w;
                    v[k + s] = (u - w) * rotate(base, k & (2 * s - 1), 2 * s);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < R; ++k) a[swz<T>(b + j + k * Q)] = v[k];
    }
    __syncthreads();
}

template <typename T, int R>
__device__ __forceinline__ void dit_pass(cpx<T>* a, int L, int h, const cpx<T>* __restrict__ tw, int twl, int tid,
                                         int nth) {
    // Halves h, 2h, ..., h R/2; element spacing Q = h, block span R h.
    const int Q = h;
    for (int i = tid; i < L / R; i += nth) {
        const int j = i % Q;
        const int b = (i / Q) * (R * Q);
        cpx<T> v[R];
#pragma unroll
        for (int k = 0; k < R; ++k) v[k] = a[swz<T>(b + j + k * Q)];
#pragma unroll
        for (int s = 1; s < R; s <<= 1) {
            const cpx<T> base = tw[j * (twl / (2 * Q * s))];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if ((k & (2 * s - 1)) < s) {
                    cpx<T> w = rotate(base, k & (2 * s - 1), 2 * s);
                    w.im = -w.im;
                    const cpx<T> t = v[k + s] * w;
                    const cpx<T> u = v[k];
                    v[k] = u + t;
                    v[k + s] = u - t;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < R; ++k) a[swz<T>(b + j + k * Q)] = v[k];
    }
    __syncthreads();
}

// Forward, natural order in, bit-reversed out: radix-8 passes, then 4 or 2.
// Threads tid < nth of the block take part; every thread of the block must
// call (the passes synchronize the block).
template <typename T>
__device__ __forceinline__ void fft_dif(cpx<T>* a, int L, const cpx<T>* __restrict__ tw, int twl, int tid, int nth) {
    int H = L >> 1;
    while (H >= 4) {
        dif_pass<T, 8>(a, L, H, tw, twl, tid, nth);
        H >>= 3;
    }
    if (H == 2) dif_pass<T, 4>(a, L, H, tw, twl, tid, nth);
    else if (H == 1) dif_pass<T, 2>(a, L, H, tw, twl, tid, nth);
}

// Inverse (unnormalized), bit-reversed in, natural order out.
template <typename T>
__device__ __forceinline__ void ifft_dit(cpx<T>* a, int L, const cpx<T>* __restrict__ tw, int twl, int tid, int nth) {
    int h = 1;
    while (h * 8 <= L) {
        dit_pass<T, 8>(a, L, h, tw, twl, tid, nth);
        h <<= 3;
    }
    if (h * 4 == L) dit_pass<T, 4>(a, L, h, tw, twl, tid, nth);
    else if (h * 2 == L) dit_pass<T, 2>(a, L, h, tw, twl, tid, nth);
}

// Block: G groups of U = blockDim.x / G threads; the segment's forward FFT
// uses the whole block, then each group takes one filter at a time (its own
// product buffer), so short segments still keep every thread busy.
// PAIR (real signal, real filters): two filters share one inverse FFT, the
// second riding on the imaginary part (both outputs are real), which halves
// the inverse transforms.
template <typename T, bool CX, int OUT, bool DERIV, bool PAIR>
__device__ __forceinline__ void ols_body(
    const T* __restrict__ xr, const T* __restrict__ xi, long long xlen, long long origin, int L, int log2l,
    int stride, int u0, int count, const cpx<T>* __restrict__ H, const long long* __restrict__ hoff,
    const int* __restrict__ blo, const int* __restrict__ blen, const int* __restrict__ frow, int nfilters,
    int fg, long long col_lo, long long col_hi, int hop, long long ncols_out, const cpx<T>* __restrict__ tw,
    int twl, void* __restrict__ out) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int G = blockDim.y;
    const int U = blockDim.x;
    const int tid = threadIdx.y * U + threadIdx.x;
    const int nth = U * G;
    const int lane = threadIdx.x;
    cpx<T>* A = (cpx<T>*)smem_raw;
    cpx<T>* B = A + L * (1 + threadIdx.y);
    const long long j = blockIdx.x;
    const long long s0 = origin + j * stride - u0;
    for (int i = tid; i < L; i += nth) {
        const long long s = s0 + i;
        T vr = 0, vi = 0;
        if (s >= 0 && s < xlen) {
            vr = xr[s];
            if (CX) vi = xi[s];
        }
        A[swz<T>(i)] = mk(vr, vi);
    }
    __syncthreads();
    fft_dif(A, L, tw, twl, tid, nth);
    const int shift = 32 - log2l;
    // Outputs u in [u0, u0 + count) of this segment that fall inside [col_lo, col_hi).
    const long long cbase = j * stride - u0;
    const int ulo = (int)max((long long)u0, col_lo - cbase);
    const int uhi = (int)min((long long)(u0 + count), col_hi - cbase);
    const int fend = min(nfilters, (int)(blockIdx.y + 1) * fg);
    const int P = PAIR ? 2 : 1;
    for (int f0 = blockIdx.y * fg; f0 < fend; f0 += G * P) {
        const int f = f0 + threadIdx.y * P;
        const bool active = f < fend;
        const bool active2 = PAIR && f + 1 < fend;
        // A band over every bin writes all of B; only narrower bands need it cleared.
        if (!(active && blen[f] < 0))
            for (int i = lane; i < L; i += U) B[i] = mk((T)0, (T)0);
        __syncthreads();
        if (active) {
            const cpx<T>* __restrict__ hf = H + hoff[f];
            const int lo = blo[f], n = blen[f];
            if (n < 0) {
                // Dense: the spectrum is stored in bit-reversed order, so the
                // product runs over consecutive slots (no bank conflicts).
                for (int p = lane; p < L; p += U) {
                    const int q = swz<T>(p);
                    B[q] = A[q] * hf[p];
                }
            } else {
                for (int b = lane; b < n; b += U) {
                    const int k = (lo + b) & (L - 1);
                    const int p = swz<T>(__brev(k) >> shift);
                    B[p] = A[p] * hf[b];
                }
            }
        }
        if (PAIR) {
            __syncthreads();
            if (active2) {
                const cpx<T>* __restrict__ hf = H + hoff[f + 1];
                const int lo = blo[f + 1], n = blen[f + 1];
                // B += i y
                if (n < 0) {
                    for (int p = lane; p < L; p += U) {
                        const int q = swz<T>(p);
                        const cpx<T> y = A[q] * hf[p];
                        B[q] = mk(B[q].re - y.im, B[q].im + y.re);
                    }
                } else {
                    for (int b = lane; b < n; b += U) {
                        const int k = (lo + b) & (L - 1);
                        const int p = swz<T>(__brev(k) >> shift);
                        const cpx<T> y = A[p] * hf[b];
                        B[p] = mk(B[p].re - y.im, B[p].im + y.re);
                    }
                }
            }
        }
        __syncthreads();
        ifft_dit(B, L, tw, twl, lane, U);
        if (active) {
            const long long row = (long long)frow[f] * ncols_out;
            const long long row2 = active2 ? (long long)frow[f + 1] * ncols_out : 0;
            for (int u = ulo + lane; u < uhi; u += U) {
                const long long c = cbase + u;
                long long rel = c - col_lo;
                if (hop > 1) {
                    if (rel % hop != 0) continue;
                    rel /= hop;
                }
                cpx<T> v;
                if (DERIV) {
                    if (col_hi - col_lo < 2) {
                        v = mk((T)0, (T)0);
                    } else if (c == col_lo) {
                        v = B[swz<T>(u + 1)] - B[swz<T>(u)];
                    } else if (c == col_hi - 1) {
                        v = B[swz<T>(u)] - B[swz<T>(u - 1)];
                    } else {
                        v = B[swz<T>(u + 1)] - B[swz<T>(u - 1)];
                        v.re *= (T)0.5;
                        v.im *= (T)0.5;
                    }
                } else {
                    v = B[swz<T>(u)];
                }
                if (PAIR) {
                    store_value<T, OUT>(out, row + rel, v.re, (T)0);
                    if (active2) store_value<T, OUT>(out, row2 + rel, v.im, (T)0);
                } else {
                    store_value<T, OUT>(out, row + rel, v.re, v.im);
                }
            }
        }
        __syncthreads();
    }
}

#define OLS(NAME, T, CX, OUT, DERIV, PAIR)                                                                         \
    extern "C" __global__ void __launch_bounds__(1024) NAME(                                            \
        const T* xr, const T* xi, long long xlen, long long origin, int L, int log2l, int stride, int u0,    \
        int count, const cpx<T>* H, const long long* hoff, const int* blo, const int* blen, const int* frow, \
        int nfilters, int fg, long long col_lo, long long col_hi, int hop, long long ncols_out,              \
        const cpx<T>* tw, int twl, void* out) {                                                              \
        ols_body<T, CX, OUT, DERIV, PAIR>(xr, xi, xlen, origin, L, log2l, stride, u0, count, H, hoff, blo, blen,   \
                                    frow, nfilters, fg, col_lo, col_hi, hop, ncols_out, tw, twl, out);       \
    }
// The host appends the one instantiation it needs, e.g. `OLS(kernel, float, 0, 0, 0, 1)`.
