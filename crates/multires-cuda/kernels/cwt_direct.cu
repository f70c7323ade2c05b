// Seed 000's "simultaneous multiple small-mask convolution" and the shifted
// convolution of large masks, as one kernel.
//
// A work item is either a run of consecutive (short) masks, all computed by
// one block from one shared-memory tile of the signal, or one piece (a tap
// range) of a long mask whose partial result goes to a scratch slot; the
// pieces of a long mask are added in a fixed order by cwt_reduce, so the sum
// is deterministic. Grid: x = column tiles, y = work items.
//
// W[s, c] = sum_k x[c*hop + k] conj(m_s[k]), k = -h..h; the signal is read at
// x[c*hop + k + xoff] (zero outside [0, xlen)).

#define BLOCK 128
#define OPT 8
#define TILE (BLOCK * OPT)
#define FLUSH 64

template <typename T, bool CX, bool CM, int OUT>
__device__ __forceinline__ void direct_body(
    const T* __restrict__ xr, const T* __restrict__ xi, long long xlen, long long xoff,
    const T* __restrict__ mr, const T* __restrict__ mi, const long long* __restrict__ mcentre,
    const int* __restrict__ mhalf, const int* __restrict__ mrow, const int* __restrict__ items,
    int ncols, int hop, void* __restrict__ out, cpx<T>* __restrict__ partial) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sr = (T*)smem_raw;
    const int* it = items + 5 * blockIdx.y;
    const int first = it[0], count = it[1], klo = it[2], khi = it[3], slot = it[4];
    const int span = khi - klo + 1;
    const long long c0 = (long long)blockIdx.x * TILE;
    const int tid = threadIdx.x;
    // Sample index (into x) of window element 0.
    const long long ws = c0 * hop + klo + xoff;
    const bool fast = hop == 1;
    // Fast path: element i of the window lives at (i % OPT) * wd + i / OPT, so
    // that thread t reading element t*OPT + j hits consecutive banks.
    const int wd = BLOCK + (span + OPT - 1) / OPT + 2;
    const int wlen = fast ? OPT * wd : (TILE - 1) * hop + span;
    T* si = sr + wlen;
    for (int i = tid; i < wlen; i += BLOCK) {
        long long s = ws + i;
        T vr = 0, vi = 0;
        if (s >= 0 && s < xlen) {
            vr = xr[s];
            if (CX) vi = xi[s];
        }
        int p = fast ? (i % OPT) * wd + i / OPT : i;
        sr[p] = vr;
        if (CX) si[p] = vi;
    }
    __syncthreads();

    for (int m = first; m < first + count; ++m) {
        const int h = mhalf[m];
        const int lo = slot >= 0 ? klo : -h;
        const int hi = slot >= 0 ? khi : h;
        const T* __restrict__ pr = mr + mcentre[m];
        const T* __restrict__ pi = mi + mcentre[m];
        T accr[OPT], acci[OPT];
        Compensated<T> totr[OPT], toti[OPT];
#pragma unroll
        for (int r = 0; r < OPT; ++r) {
            accr[r] = 0;
            acci[r] = 0;
            totr[r].init();
            toti[r].init();
        }
        if (fast) {
            // Taps k = lo..hi are window offsets kk = k - klo; thread t's
            // column r reads window element t*OPT + r + kk.
            const int kb = lo - klo, ke = hi - klo;
            T xa[2 * OPT], xb[2 * OPT];
#pragma unroll
            for (int j = 0; j < 2 * OPT; ++j) {
                int e = kb + j;
                int p = (e % OPT) * wd + tid + e / OPT;
                xa[j] = sr[p];
                if (CX) xb[j] = si[p];
            }
            int since = 0;
            for (int kk = kb; kk <= ke; kk += OPT) {
                const int tmax = min(OPT, ke - kk + 1);
#pragma unroll
                for (int t = 0; t < OPT; ++t) {
                    if (t < tmax) {
                        const T vr = pr[kk + klo + t];
                        const T vi = CM ? pi[kk + klo + t] : (T)0;
#pragma unroll
                        for (int r = 0; r < OPT; ++r) {
                            const T a = xa[r + t];
                            accr[r] = fma(a, vr, accr[r]);
                            if (CM) {
                                if (CX) {
                                    const T b = xb[r + t];
                                    accr[r] = fma(b, vi, accr[r]);
                                    acci[r] = fma(b, vr, acci[r]);
                                    acci[r] = fma(-a, vi, acci[r]);
                                } else {
                                    acci[r] = fma(-a, vi, acci[r]);
                                }
                            } else if (CX) {
                                acci[r] = fma(xb[r + t], vr, acci[r]);
                            }
                        }
                    }
                }
                // Slide the register window by OPT.
#pragma unroll
                for (int j = 0; j < OPT; ++j) {
                    xa[j] = xa[j + OPT];
                    if (CX) xb[j] = xb[j + OPT];
                }
#pragma unroll
                for (int j = OPT; j < 2 * OPT; ++j) {
                    int e = kk + OPT + j;
                    int p = (e % OPT) * wd + tid + e / OPT;
                    xa[j] = sr[p];
                    if (CX) xb[j] = si[p];
                }
                since += OPT;
                if (sizeof(T) == 4 && since >= FLUSH) {
                    since = 0;
#pragma unroll
                    for (int r = 0; r < OPT; ++r) {
                        totr[r].add(accr[r]);
                        toti[r].add(acci[r]);
                        accr[r] = 0;
                        acci[r] = 0;
                    }
                }
            }
        } else {
#pragma unroll
            for (int r = 0; r < OPT; ++r) {
                const int cl = tid + r * BLOCK;
                int since = 0;
                for (int k = lo; k <= hi; ++k) {
                    const int p = cl * hop + k - klo;
                    const T a = sr[p];
                    const T vr = pr[k];
                    accr[r] = fma(a, vr, accr[r]);
                    if (CM) {
                        const T vi = pi[k];
                        if (CX) {
                            const T b = si[p];
                            accr[r] = fma(b, vi, accr[r]);
                            acci[r] = fma(b, vr, acci[r]);
                        }
                        acci[r] = fma(-a, vi, acci[r]);
                    } else if (CX) {
                        acci[r] = fma(si[p], vr, acci[r]);
                    }
                    if (sizeof(T) == 4 && ++since == FLUSH) {
                        since = 0;
                        totr[r].add(accr[r]);
                        toti[r].add(acci[r]);
                        accr[r] = 0;
                        acci[r] = 0;
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < OPT; ++r) {
            totr[r].add(accr[r]);
            toti[r].add(acci[r]);
            const long long c = c0 + (fast ? tid * OPT + r : tid + r * BLOCK);
            if (c < ncols) {
                if (slot >= 0) {
                    partial[(long long)slot * ncols + c] = mk(totr[r].sum, toti[r].sum);
                } else {
                    store_value<T, OUT>(out, (long long)mrow[m] * ncols + c, totr[r].sum, toti[r].sum);
                }
            }
        }
    }
}

// The pieces of each long mask added in order, then post-processed.
// reds: 3 ints per long mask (first slot, pieces, output row). Grid: x = columns / 256, y = long masks.
template <typename T, int OUT>
__device__ __forceinline__ void reduce_body(const cpx<T>* __restrict__ partial, const int* __restrict__ reds,
                                            int ncols, void* __restrict__ out) {
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ncols) return;
    const int* r = reds + 3 * blockIdx.y;
    Compensated<T> sr, si;
    sr.init();
    si.init();
    for (int p = 0; p < r[1]; ++p) {
        cpx<T> v = partial[(long long)(r[0] + p) * ncols + c];
        sr.add(v.re);
        si.add(v.im);
    }
    store_value<T, OUT>(out, (long long)r[2] * ncols + c, sr.sum, si.sum);
}

#define DIRECT(NAME, T, CX, CM, OUT)                                                                         \
    extern "C" __global__ void __launch_bounds__(BLOCK) NAME(                                                \
        const T* xr, const T* xi, long long xlen, long long xoff, const T* mr, const T* mi,                  \
        const long long* mcentre, const int* mhalf, const int* mrow, const int* items, int ncols, int hop,   \
        void* out, cpx<T>* partial) {                                                                        \
        direct_body<T, CX, CM, OUT>(xr, xi, xlen, xoff, mr, mi, mcentre, mhalf, mrow, items, ncols, hop,     \
                                    out, partial);                                                           \
    }
#define REDUCE(NAME, T, OUT)                                                                                    \
    extern "C" __global__ void NAME(const cpx<T>* partial, const int* reds, int ncols,   \
                                                       void* out) {                                         \
        reduce_body<T, OUT>(partial, reds, ncols, out);                                                      \
    }
// The host appends the one instantiation it needs, e.g. `DIRECT(kernel, float, 0, 1, 0)`.
