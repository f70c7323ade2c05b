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

// x[t] of a row of length n extended by MODE, for any integer t; the row's
// samples come from g(i), i in [0, n) (a plain row, or the two edge windows
// of the tiled wavedec's edge pass).
template <typename T, int MODE, typename G>
__device__ __forceinline__ T ext_get(const G& g, long long n, long long t) {
    if (t >= 0 && t < n) return g(t);
    if (MODE == MODE_ZERO) return (T)0;
    if (MODE == MODE_PERIODIC) {
        long long r = t % n;
        if (r < 0) r += n;
        return g(r);
    }
    if (MODE == MODE_PERIODIZATION) {
        const long long np = n + (n & 1);
        long long r = t % np;
        if (r < 0) r += np;
        return g(r < n - 1 ? r : n - 1);
    }
    // Mirror-symmetric modes: the right edge is the left edge of the reversed row.
    const bool rev = t >= n;
    const long long m = rev ? t - (n - 1) : -t;  // >= 1
#define IDX(i) g(rev ? (n - 1 - (i)) : (i))
    if (MODE == MODE_CONSTANT) return IDX(0);
    if (MODE == MODE_SYMMETRIC || MODE == MODE_ANTISYMMETRIC) {
        const long long r = (m - 1) % (2 * n);
        if (r < n) return MODE == MODE_ANTISYMMETRIC ? -IDX(r) : IDX(r);
        return IDX(2 * n - 1 - r);
    }
    if (MODE == MODE_REFLECT) {
        if (n == 1) return IDX(0);
        const long long r = m % (2 * n - 2);
        return IDX(r < n ? r : 2 * n - 2 - r);
    }
    if (MODE == MODE_SMOOTH) {
        if (n < 2) return IDX(0);
        const T mf = (T)m;
        return ((T)1 + mf) * IDX(0) + (-mf) * IDX(1);
    }
    // Antireflect: block q of n - 1 samples mirrors about x0 + q (x0 - x_{n-1}).
    if (n == 1) return IDX(0);
    const long long q = (m - 1) / (n - 1);
    const long long r = (m - 1) % (n - 1) + 1;
    const T qf = (T)q;
    if ((q & 1) == 0) return ((T)2 + qf) * IDX(0) + (-qf) * IDX(n - 1) + (T)(-1) * IDX(r);
    return ((T)1 + qf) * IDX(0) + (-qf - (T)1) * IDX(n - 1) + IDX(n - 1 - r);
#undef IDX
}

template <typename T, int MODE>
__device__ __forceinline__ T ext_at(const T* x, long long n, long long t) {
    return ext_get<T, MODE>([x](long long i) { return x[i]; }, n, t);
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
// rec_hi) in natural order. Away from the edges no index needs a test.
template <typename T>
__device__ __forceinline__ T synth_at(const T* a, const T* d, long long nc, long long n, int shift, bool periodic,
                                      const T* lo, const T* hi, int F) {
    long long m = n + shift;
    if (periodic && m >= 2 * nc) m %= 2 * nc;
    const long long i = m >> 1;
    const int ph = (int)(m & 1);
    T acc = 0;
    if (i - (F / 2 - 1) >= 0 && i < nc) {
        for (int k = 0; k < F / 2; ++k) acc = a[i - k] * lo[2 * k + ph] + d[i - k] * hi[2 * k + ph] + acc;
        return acc;
    }
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


// The seed's lattice (l2_ww, l2_nw): one thread per (cA, cD) pair runs the
// factorized polyphase matrix E(z) = G_S Λ ... G_1 Λ M_0 over the S + 1
// sample pairs (x[2m + s0], x[2m + s0 - 1]), m = o - S .. o, that output o
// depends on; S(S+1)/2 butterflies a pair, against F multiply-adds of the
// matrix form (the seed found it slower on GPUs; the bench measures it).
// coef: M_0 (4 values), then (u, v) per stage: (a, b) -> (u a - v b, v a + u b)
// (u = 1, v = tan for a tangent stage; u = cot, v = 1 for a cotangent one).
// NW: x is the extended row (DWT_EXTEND's, n its length) and the host
// passes s0 = F - 1, where the sample 2m + s0 of the row lies in it.
template <typename T, int MODE, int S, bool NW>
__device__ __forceinline__ void lat_fwd_body(const T* __restrict__ x, long long n, long long no, int s0,
                                             const T* __restrict__ coef, T* __restrict__ ca, T* __restrict__ cd) {
    const long long row = blockIdx.y;
    const long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= no) return;
    const T* xr = x + row * n;
    const T m00 = coef[0], m01 = coef[1], m10 = coef[2], m11 = coef[3];
    T p0[S + 1], p1[S + 1];
#pragma unroll
    for (int i = 0; i <= S; ++i) {
        const long long m = o - S + i;
        T v0, v1;
        if (NW) {
            v0 = xr[2 * m + s0];
            v1 = xr[2 * m + s0 - 1];
        } else {
            v0 = ext_at<T, MODE>(xr, n, 2 * m + s0);
            v1 = ext_at<T, MODE>(xr, n, 2 * m + s0 - 1);
        }
        p0[i] = m00 * v0 + m01 * v1;
        p1[i] = m10 * v0 + m11 * v1;
    }
#pragma unroll
    for (int st = 0; st < S; ++st) {
        const T u = coef[4 + 2 * st], v = coef[5 + 2 * st];
#pragma unroll
        for (int i = S; i > st; --i) {
            const T a = p0[i], b = p1[i - 1];
            p0[i] = u * a - v * b;
            p1[i] = v * a + u * b;
        }
    }
    ca[row * no + o] = p0[S];
    cd[row * no + o] = p1[S];
}

// Synthesis by the lattice of R(z): thread i makes the pair (y_2i, y_2i+1)
// from the coefficient pairs (a_q, d_q), q = i - S .. i (zero outside
// [0, nc), wrapped for periodization), and stores out[n] = y[n + shift].
template <typename T, int S>
__device__ __forceinline__ void lat_inv_body(const T* __restrict__ a, const T* __restrict__ d, long long nc,
                                             long long a_stride, long long nout, int shift, int periodic,
                                             long long i0, long long count, const T* __restrict__ coef,
                                             T* __restrict__ out) {
    const long long row = blockIdx.y;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    const long long i = i0 + t;
    const T* ar = a + row * a_stride;
    const T* dr = d + row * nc;
    const T m00 = coef[0], m01 = coef[1], m10 = coef[2], m11 = coef[3];
    T p0[S + 1], p1[S + 1];
#pragma unroll
    for (int k = 0; k <= S; ++k) {
        long long q = i - S + k;
        T v0 = 0, v1 = 0;
        if (periodic) {
            q %= nc;
            if (q < 0) q += nc;
            v0 = ar[q];
            v1 = dr[q];
        } else if (q >= 0 && q < nc) {
            v0 = ar[q];
            v1 = dr[q];
        }
        p0[k] = m00 * v0 + m01 * v1;
        p1[k] = m10 * v0 + m11 * v1;
    }
#pragma unroll
    for (int st = 0; st < S; ++st) {
        const T u = coef[4 + 2 * st], v = coef[5 + 2 * st];
#pragma unroll
        for (int k = S; k > st; --k) {
            const T x0 = p0[k], x1 = p1[k - 1];
            p0[k] = u * x0 - v * x1;
            p1[k] = v * x0 + u * x1;
        }
    }
    T* orow = out + row * nout;
#pragma unroll
    for (int ph = 0; ph < 2; ++ph) {
        long long nn = 2 * i + ph - shift;
        if (periodic) {
            nn %= 2 * nc;
            if (nn < 0) nn += 2 * nc;
        }
        if (nn >= 0 && nn < nout) orow[nn] = ph ? p1[S] : p0[S];
    }
}

#define MAX_FUSE 6


// dst[i] = src(i) for i < cnt, LOAD_BATCH independent global loads in
// flight per thread (a plain loop keeps one, and a tile then waits on
// DRAM latency sample by sample).
#define LOAD_BATCH 8
template <typename T, typename G>
__device__ __forceinline__ void batched_load(T* dst, long long cnt, const G& src) {
    for (long long base = threadIdx.x; base < cnt; base += LOAD_BATCH * (long long)blockDim.x) {
        T v[LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; ++u) {
            const long long i = base + u * (long long)blockDim.x;
            v[u] = i < cnt ? src(i) : (T)0;
        }
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; ++u) {
            const long long i = base + u * (long long)blockDim.x;
            if (i < cnt) dst[i] = v[u];
        }
    }
}

// K levels of a long row in tiles: block (b, row) owns cA_K[b tk, (b+1) tk)
// and the details below it (cD_l[b tk 2^(K-l), ...)), loads the input they
// need once (with the halo) and keeps every level between in shared memory.
// No extension here: outputs whose inputs leave the row are left to the
// edge pass (DWT_EDGES), which writes them after this kernel.
// lens: K + 1 lengths (the input's first); doff: the cD_l blocks in out.
template <typename T, int F>
__device__ __forceinline__ void dwt_tile_body(const T* __restrict__ x, int K, const long long* __restrict__ lens,
                                              const long long* __restrict__ doff, T* __restrict__ out,
                                              T* __restrict__ ca_out, int s0, const T* __restrict__ filt, int tk,
                                              int span0) {
    __shared__ T f[2 * MAX_TAPS];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* const buf0 = (T*)dwt_smem;
    T* const buf1 = buf0 + span0;
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.y, b = blockIdx.x;
    long long lo[MAX_FUSE + 1], hi[MAX_FUSE + 1], n[MAX_FUSE + 1];
    for (int l = 0; l <= K; ++l) n[l] = lens[l];
    lo[K] = b * tk;
    hi[K] = min((b + 1) * tk, n[K]);
    for (int l = K - 1; l >= 0; --l) {
        long long nlo = 2 * lo[l + 1] + s0 - F + 1, nhi = 2 * (hi[l + 1] - 1) + s0 + 1;
        if (l > 0) {
            const long long olo = (b * tk) << (K - l), ohi = min(((b + 1) * tk) << (K - l), n[l]);
            if (olo < ohi) {
                nlo = min(nlo, olo);
                nhi = max(nhi, ohi);
            }
        }
        lo[l] = nlo;
        hi[l] = nhi;
    }
    const T* xr = x + row * n[0];
    {
        const long long l0 = lo[0], n0 = n[0];
        batched_load(buf0, hi[0] - lo[0], [xr, l0, n0](long long i) {
            const long long g = l0 + i;
            return (g >= 0 && g < n0) ? xr[g] : (T)0;
        });
    }
    __syncthreads();
    long long vlo = max(lo[0], 0LL), vhi = min(hi[0], n[0]);
    for (int l = 1; l <= K; ++l) {
        const T* src = (l & 1) ? buf0 : buf1;
        T* dst = (l & 1) ? buf1 : buf0;
        const long long nvlo = max(lo[l], (vlo - s0 + F - 1 + 1) >> 1);
        const long long nvhi = min(hi[l], ((vhi - 1 - s0) >> 1) + 1);
        const long long olo = (b * tk) << (K - l), ohi = min(((b + 1) * tk) << (K - l), n[l]);
        T* cd = out + doff[l - 1] + row * n[l] + nvlo;
        T* cak = ca_out + row * n[K] + nvlo;
        // Tile-local indices in 32 bits: j = o - nvlo.
        const int cnt = (int)(nvhi - nvlo), jlo = (int)(olo - nvlo), jhi = (int)(ohi - nvlo);
        const T* w0 = src + (2 * nvlo + s0 - F + 1 - lo[l - 1]);
        T* d0 = dst + (nvlo - lo[l]);
        for (int j = threadIdx.x; j < cnt; j += blockDim.x) {
            const T* w = w0 + 2 * j;
            T a = 0, d = 0;
#pragma unroll
            for (int t = 0; t < F; ++t) {
                const T v = w[t];
                a = v * f[t] + a;
                d = v * f[F + t] + d;
            }
            const bool own = j >= jlo && j < jhi;
            if (l < K)
                d0[j] = a;
            else if (own)
                cak[j] = a;
            if (own) cd[j] = d;
        }
        __syncthreads();
        vlo = nvlo;
        vhi = nvhi;
    }
}

// The outputs of DWT_TILE's levels near both ends of each row (one block per
// row), with the mode's extension: level l keeps its first wins[l] and last
// wins[K + 1 + l] samples (enough for the next level's windows and the
// extension's reads); a window of the whole row when they meet.
template <typename T, int MODE>
__device__ __forceinline__ void dwt_edges_body(const T* __restrict__ x, int K, const long long* __restrict__ lens,
                                               const long long* __restrict__ wins,
                                               const long long* __restrict__ doff, T* __restrict__ out,
                                               T* __restrict__ ca_out, int s0, const T* __restrict__ filt, int F,
                                               int span) {
    __shared__ T f[2 * MAX_TAPS];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* const buf0 = (T*)dwt_smem;
    T* const buf1 = buf0 + span;
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.x;
    {
        const long long n0 = lens[0], wl = wins[0], wr = wins[K + 1];
        const T* xr = x + row * n0;
        for (long long i = threadIdx.x; i < wl + wr; i += blockDim.x)
            buf0[i] = i < wl ? xr[i] : xr[n0 - wr + (i - wl)];
    }
    __syncthreads();
    for (int l = 1; l <= K; ++l) {
        const T* src = (l & 1) ? buf0 : buf1;
        T* dst = (l & 1) ? buf1 : buf0;
        const long long nn = lens[l - 1], wl = wins[l - 1], wr = wins[K + l];
        const long long no = lens[l], owl = wins[l], owr = wins[K + 1 + l];
        auto g = [src, nn, wl, wr](long long i) { return i < wl ? src[i] : src[wl + i - (nn - wr)]; };
        T* cd = out + doff[l - 1] + row * no;
        for (long long k = threadIdx.x; k < owl + owr; k += blockDim.x) {
            const long long o = k < owl ? k : no - owr + (k - owl);
            const long long first = 2 * o + s0 - F + 1;
            T a = 0, d = 0;
            for (int j = 0; j < F; ++j) {
                const T v = ext_get<T, MODE>(g, nn, first + j);
                a = v * f[j] + a;
                d = v * f[F + j] + d;
            }
            if (l < K)
                dst[k] = a;
            else
                ca_out[row * no + o] = a;
            cd[o] = d;
        }
        __syncthreads();
    }
}

// K steps of a waverec in tiles: block (b, row) owns outputs [b S, (b+1) S)
// of the last step and computes, coarsest first, the part of each
// intermediate approximation they need, in shared memory, on virtual
// indices: zero outside [0, nc) (or periodic for periodization, where the
// host guarantees that no step cuts its output).
// ncs, nouts, doff: per step, coarsest first (cD's length, the step's output
// length, the cD block in coeffs); ca: the coarsest approximation (na per row).
template <typename T, int F>
__device__ __forceinline__ void idwt_tile_body(const T* __restrict__ ca, long long na, int K,
                                               const long long* __restrict__ ncs, const long long* __restrict__ nouts,
                                               const long long* __restrict__ doff, const T* __restrict__ coeffs,
                                               int shift, int periodic, const T* __restrict__ filt, int S, int span,
                                               T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* const buf0 = (T*)dwt_smem;
    T* const buf1 = buf0 + span;
    T* const dbuf = buf1 + span;
    load_filters(filt, 2 * F, f);
    const long long row = blockIdx.y, b = blockIdx.x;
    // plo/phi[s]: the outputs step s computes; the input range of step s is need(p[s]).
    long long plo[MAX_FUSE], phi[MAX_FUSE];
    const long long nfinal = nouts[K - 1];
    plo[K - 1] = b * S;
    phi[K - 1] = min((b + 1) * S, nfinal);
    constexpr int h = F / 2 - 1;
    for (int s = K - 1; s > 0; --s) {
        plo[s - 1] = ((plo[s] + shift) >> 1) - h;
        phi[s - 1] = ((phi[s] - 1 + shift) >> 1) + 1;
    }
    long long alo = ((plo[0] + shift) >> 1) - h, ahi = ((phi[0] - 1 + shift) >> 1) + 1;
    {
        const long long nc = ncs[0];
        const T* car = ca + row * na;
        batched_load(buf0, ahi - alo, [car, alo, nc, periodic](long long j) {
            const long long q = alo + j;
            if (periodic) {
                long long r = q % nc;
                if (r < 0) r += nc;
                return car[r];
            }
            return (q >= 0 && q < nc) ? car[q] : (T)0;
        });
    }
    for (int s = 0; s < K; ++s) {
        const T* src = (s & 1) ? buf1 : buf0;
        T* dst = (s & 1) ? buf0 : buf1;
        const long long nc = ncs[s];
        const T* dg = coeffs + doff[s] + row * nc;
        // This step's details over the input range, like the approximation.
        const long long dlo = alo, dhi = ((phi[s] - 1 + shift) >> 1) + 1;
        batched_load(dbuf, dhi - dlo, [dg, dlo, nc, periodic](long long j) {
            const long long q = dlo + j;
            if (periodic) {
                long long r = q % nc;
                if (r < 0) r += nc;
                return dg[r];
            }
            return (q >= 0 && q < nc) ? dg[q] : (T)0;
        });
        __syncthreads();
        const bool last = s == K - 1;
        const long long nnext = last ? nfinal : ncs[s + 1];
        // Tile-local indices in 32 bits: j = n - plo[s]; n + shift - 2 alo >= 0.
        const int cnt = (int)(phi[s] - plo[s]);
        const int ilo = (int)(-plo[s]), ihi = (int)(nnext - plo[s]);
        const int base = (int)(plo[s] + shift - 2 * alo);
        T* orow = out + row * nfinal + plo[s];
        for (int j = threadIdx.x; j < cnt; j += blockDim.x) {
            const bool inside = j >= ilo && j < ihi;
            if (!periodic && !inside) {
                if (!last) dst[j] = (T)0;
                continue;
            }
            const int m = base + j;
            const int i = m >> 1;
            const int ph = m & 1;
            const T* av = src + i;
            const T* dv = dbuf + i;
            T acc = 0;
#pragma unroll
            for (int k = 0; k <= h; ++k) acc = av[-k] * f[2 * k + ph] + dv[-k] * f[F + 2 * k + ph] + acc;
            if (!last)
                dst[j] = acc;
            else if (inside)
                orow[j] = acc;
        }
        __syncthreads();
        alo = plo[s];
    }
}


// n-D: an array seen as (outer, n, inner) around the transformed axis.
// DWT_AX: one thread per (output pair, column); threads of a warp take
// consecutive columns (the innermost index), so every load and store is
// coalesced whatever the axis. Block (32, 8): x over inner, y over outputs.
template <typename T, int MODE>
__device__ __forceinline__ void dwt_ax_body(const T* __restrict__ x, long long n, long long no, long long inner,
                                            int s0, const T* __restrict__ filt, int F, T* __restrict__ ca,
                                            T* __restrict__ cd) {
    __shared__ T f[2 * MAX_TAPS];
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 2 * F; i += blockDim.x * blockDim.y) f[i] = filt[i];
    __syncthreads();
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long outer = blockIdx.z;
    if (i >= inner) return;
    const T* xc = x + outer * n * inner + i;
    for (long long o = (long long)blockIdx.y * blockDim.y + threadIdx.y; o < no; o += (long long)gridDim.y * blockDim.y) {
        const long long first = 2 * o + s0 - F + 1;
        T a = 0, d = 0;
        if (first >= 0 && first + F <= n) {
            for (int j = 0; j < F; ++j) {
                const T v = xc[(first + j) * inner];
                a = v * f[j] + a;
                d = v * f[F + j] + d;
            }
        } else {
            auto g = [xc, inner](long long t) { return xc[t * inner]; };
            for (int j = 0; j < F; ++j) {
                const T v = ext_get<T, MODE>(g, n, first + j);
                a = v * f[j] + a;
                d = v * f[F + j] + d;
            }
        }
        ca[(outer * no + o) * inner + i] = a;
        cd[(outer * no + o) * inner + i] = d;
    }
}

// IDWT_AX: the synthesis along an axis, (a, d) of nc coefficients there.
template <typename T>
__device__ __forceinline__ void idwt_ax_body(const T* __restrict__ a, const T* __restrict__ d, long long nc,
                                             long long inner, long long nout, int shift, int periodic,
                                             const T* __restrict__ filt, int F, T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 2 * F; i += blockDim.x * blockDim.y) f[i] = filt[i];
    __syncthreads();
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long outer = blockIdx.z;
    if (i >= inner) return;
    const T* ac = a + outer * nc * inner + i;
    const T* dc = d + outer * nc * inner + i;
    for (long long n = (long long)blockIdx.y * blockDim.y + threadIdx.y; n < nout; n += (long long)gridDim.y * blockDim.y) {
        long long m = n + shift;
        if (periodic && m >= 2 * nc) m %= 2 * nc;
        const long long c = m >> 1;
        const int ph = (int)(m & 1);
        T acc = 0;
        for (int k = 0; k < F / 2; ++k) {
            long long q = c - k;
            if (periodic) {
                q %= nc;
                if (q < 0) q += nc;
            } else if (q < 0 || q >= nc) {
                continue;
            }
            acc = ac[q * inner] * f[2 * k + ph] + dc[q * inner] * f[F + 2 * k + ph] + acc;
        }
        out[(outer * nout + n) * inner + i] = acc;
    }
}

// IDWT2: one 2-D synthesis level over the last two axes, fused. Each
// output is the axis-1 synthesis of the (aa, ad) and (da, dd) pairs, then
// the axis-0 synthesis of those two, summed in the axis passes' order;
// the four sub-bands are read once through the caches and no intermediate
// goes to memory (the two axis passes moved the whole level twice, the
// column pass at a quarter of DRAM's rate). Used for two-tap filters
// (dwtn.rs says why).
template <typename T>
__device__ __forceinline__ void idwt2_body(const T* __restrict__ aa, const T* __restrict__ ad,
                                           const T* __restrict__ da, const T* __restrict__ dd, long long nc0,
                                           long long nc1, long long n0, long long n1, int shift, int periodic,
                                           const T* __restrict__ filt, int F, T* __restrict__ out) {
    __shared__ T f[2 * MAX_TAPS];
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 2 * F; i += blockDim.x * blockDim.y) f[i] = filt[i];
    __syncthreads();
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n1) return;
    const long long plane = (long long)blockIdx.z * nc0 * nc1;
    long long m1 = j + shift;
    if (periodic && m1 >= 2 * nc1) m1 %= 2 * nc1;
    const long long c1 = m1 >> 1;
    const int p1 = (int)(m1 & 1);
    for (long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y; i < n0; i += (long long)gridDim.y * blockDim.y) {
        long long m0 = i + shift;
        if (periodic && m0 >= 2 * nc0) m0 %= 2 * nc0;
        const long long c0 = m0 >> 1;
        const int p0 = (int)(m0 & 1);
        T acc = 0;
        for (int k0 = 0; k0 < F / 2; ++k0) {
            long long q0 = c0 - k0;
            if (periodic) {
                q0 %= nc0;
                if (q0 < 0) q0 += nc0;
            } else if (q0 < 0 || q0 >= nc0) {
                continue;
            }
            const long long row = plane + q0 * nc1;
            T ta = 0, td = 0;
            for (int k1 = 0; k1 < F / 2; ++k1) {
                long long q1 = c1 - k1;
                if (periodic) {
                    q1 %= nc1;
                    if (q1 < 0) q1 += nc1;
                } else if (q1 < 0 || q1 >= nc1) {
                    continue;
                }
                ta = aa[row + q1] * f[2 * k1 + p1] + ad[row + q1] * f[F + 2 * k1 + p1] + ta;
                td = da[row + q1] * f[2 * k1 + p1] + dd[row + q1] * f[F + 2 * k1 + p1] + td;
            }
            acc = ta * f[2 * k0 + p0] + td * f[F + 2 * k0 + p0] + acc;
        }
        out[((long long)blockIdx.z * n0 + i) * n1 + j] = acc;
    }
}

// y = x cut to w of its s entries along an axis (waverecn's trim of an
// approximation one longer than its details).
template <typename T>
__device__ __forceinline__ void crop_body(const T* __restrict__ x, long long total, long long s, long long inner,
                                          long long w, T* __restrict__ y) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= total) return;
    const long long i = k % inner, t = (k / inner) % w, o = k / (inner * w);
    y[k] = x[(o * s + t) * inner + i];
}

// One 2-D level over the last two axes (dwt2), fused: a block loads the
// input tile of 32 x 32 outputs per sub-band (with the halo and, at the
// edges, the extension along both axes, which commute), filters the rows
// into shared memory, then the columns, and writes the four sub-bands
// (keys: first letter axis 0, second axis 1).
#define D2T 32
template <typename T, int MODE, int F>
__device__ __forceinline__ void dwt2_tile_body(const T* __restrict__ x, long long n0, long long n1, long long no0,
                                               long long no1, int s0, const T* __restrict__ filt,
                                               T* __restrict__ aa, T* __restrict__ ad, T* __restrict__ da,
                                               T* __restrict__ dd) {
    constexpr int R = 2 * D2T + F - 2;
    constexpr int C = R + 1;  // padded row
    __shared__ T f[2 * F];
    extern __shared__ __align__(16) unsigned char dwt_smem[];
    T* X = (T*)dwt_smem;       // R x C
    T* L = X + R * C;          // R x D2T (rows filtered: approx along axis 1)
    T* H = L + R * D2T;        // R x D2T (detail along axis 1)
    const int tid = threadIdx.x;
    for (int i = tid; i < 2 * F; i += blockDim.x) f[i] = filt[i];
    const long long outer = blockIdx.z;
    const long long oy0 = (long long)blockIdx.y * D2T, ox0 = (long long)blockIdx.x * D2T;
    const long long r0 = 2 * oy0 + s0 - F + 1, c0 = 2 * ox0 + s0 - F + 1;
    const T* xo = x + outer * n0 * n1;
    const bool interior = r0 >= 0 && r0 + R <= n0 && c0 >= 0 && c0 + R <= n1;
    // Loads: LOAD_BATCH in flight per thread, consecutive threads on one row.
    for (int base = tid; base < R * R; base += LOAD_BATCH * blockDim.x) {
        T v[LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; ++u) {
            const int k = base + u * blockDim.x;
            v[u] = 0;
            if (k < R * R) {
                const long long gr = r0 + k / R, gc = c0 + k % R;
                if (interior) {
                    v[u] = xo[gr * n1 + gc];
                } else {
                    auto col = [xo, n1, gc](long long r) {
                        return ext_at<T, MODE>(xo + r * n1, n1, gc);
                    };
                    v[u] = ext_get<T, MODE>(col, n0, gr);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; ++u) {
            const int k = base + u * blockDim.x;
            if (k < R * R) X[(k / R) * C + k % R] = v[u];
        }
    }
    __syncthreads();
    for (int k = tid; k < R * D2T; k += blockDim.x) {
        const int r = k / D2T, ox = k % D2T;
        const T* w = X + r * C + 2 * ox;
        T a = 0, d = 0;
#pragma unroll
        for (int j = 0; j < F; ++j) {
            a = w[j] * f[j] + a;
            d = w[j] * f[F + j] + d;
        }
        L[k] = a;
        H[k] = d;
    }
    __syncthreads();
    for (int k = tid; k < D2T * D2T; k += blockDim.x) {
        const int oy = k / D2T, ox = k % D2T;
        const long long gy = oy0 + oy, gx = ox0 + ox;
        T s_aa = 0, s_da = 0, s_ad = 0, s_dd = 0;
#pragma unroll
        for (int j = 0; j < F; ++j) {
            const T l = L[(2 * oy + j) * D2T + ox], h = H[(2 * oy + j) * D2T + ox];
            s_aa = l * f[j] + s_aa;
            s_da = l * f[F + j] + s_da;
            s_ad = h * f[j] + s_ad;
            s_dd = h * f[F + j] + s_dd;
        }
        if (gy < no0 && gx < no1) {
            const long long o = (outer * no0 + gy) * no1 + gx;
            aa[o] = s_aa;
            ad[o] = s_ad;
            da[o] = s_da;
            dd[o] = s_dd;
        }
    }
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
#define DWT_TILE(NAME, T, F)                                                                                     \
    extern "C" __global__ void NAME(const T* x, int K, const long long* lens, const long long* doff, T* out,      \
                                    T* ca_out, int s0, const T* filt, int tk, int span0) {                        \
        dwt_tile_body<T, F>(x, K, lens, doff, out, ca_out, s0, filt, tk, span0);                                  \
    }
#define DWT_EDGES(NAME, T, MODE)                                                                                  \
    extern "C" __global__ void NAME(const T* x, int K, const long long* lens, const long long* wins,              \
                                    const long long* doff, T* out, T* ca_out, int s0, const T* filt, int F,       \
                                    int span) {                                                                   \
        dwt_edges_body<T, MODE>(x, K, lens, wins, doff, out, ca_out, s0, filt, F, span);                          \
    }
#define IDWT_TILE(NAME, T, F)                                                                                    \
    extern "C" __global__ void NAME(const T* ca, long long na, int K, const long long* ncs,                       \
                                    const long long* nouts, const long long* doff, const T* coeffs, int shift,    \
                                    int periodic, const T* filt, int S, int span, T* out) {                       \
        idwt_tile_body<T, F>(ca, na, K, ncs, nouts, doff, coeffs, shift, periodic, filt, S, span, out);           \
    }
#define LAT(NAME, T, MODE, S, NW)                                                                                 \
    extern "C" __global__ void NAME(const T* x, long long n, long long no, int s0, const T* coef, T* ca, T* cd) { \
        lat_fwd_body<T, MODE, S, NW>(x, n, no, s0, coef, ca, cd);                                                 \
    }
#define ILAT(NAME, T, S)                                                                                          \
    extern "C" __global__ void NAME(const T* a, const T* d, long long nc, long long a_stride, long long nout,      \
                                    int shift, int periodic, long long i0, long long count, const T* coef,        \
                                    T* out) {                                                                     \
        lat_inv_body<T, S>(a, d, nc, a_stride, nout, shift, periodic, i0, count, coef, out);                      \
    }
#define DWT_AX(NAME, T, MODE)                                                                                     \
    extern "C" __global__ void NAME(const T* x, long long n, long long no, long long inner, int s0, const T* filt, \
                                    int F, T* ca, T* cd) {                                                        \
        dwt_ax_body<T, MODE>(x, n, no, inner, s0, filt, F, ca, cd);                                               \
    }
#define IDWT_AX(NAME, T)                                                                                          \
    extern "C" __global__ void NAME(const T* a, const T* d, long long nc, long long inner, long long nout,         \
                                    int shift, int periodic, const T* filt, int F, T* out) {                      \
        idwt_ax_body<T>(a, d, nc, inner, nout, shift, periodic, filt, F, out);                                    \
    }
#define IDWT2(NAME, T)                                                                                            \
    extern "C" __global__ void NAME(const T* aa, const T* ad, const T* da, const T* dd, long long nc0,            \
                                    long long nc1, long long n0, long long n1, int shift, int periodic,           \
                                    const T* filt, int F, T* out) {                                               \
        idwt2_body<T>(aa, ad, da, dd, nc0, nc1, n0, n1, shift, periodic, filt, F, out);                           \
    }
#define CROP(NAME, T)                                                                                             \
    extern "C" __global__ void NAME(const T* x, long long total, long long s, long long inner, long long w, T* y) { \
        crop_body<T>(x, total, s, inner, w, y);                                                                   \
    }
#define DWT2_TILE(NAME, T, MODE, F)                                                                               \
    extern "C" __global__ void NAME(const T* x, long long n0, long long n1, long long no0, long long no1, int s0,  \
                                    const T* filt, T* aa, T* ad, T* da, T* dd) {                                  \
        dwt2_tile_body<T, MODE, F>(x, n0, n1, no0, no1, s0, filt, aa, ad, da, dd);                                \
    }
// The host appends the instantiation it needs, e.g. `DWT_M(kernel, float, 8, 2)`.
