// The cuFFT-based overlap-save (the in-project baseline, and the path for
// masks too long for the shared-memory engine): the segments are gathered
// and transformed once by cuFFT; per scale, the band-limited product is
// written over whole segments, inverse-transformed by one batched cuFFT, and
// the kept samples are post-processed into the output.
//
// Segment j holds x[origin + j*V + i], i < L; output c = j*V + u, u < V.

template <typename T, bool CX>
__device__ __forceinline__ void gather_body(const T* __restrict__ xr, const T* __restrict__ xi, long long xlen,
                                            long long origin, int L, int V, cpx<T>* __restrict__ seg) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const long long j = blockIdx.y;
    if (i >= L) return;
    const long long s = origin + j * V + i;
    T vr = 0, vi = 0;
    if (s >= 0 && s < xlen) {
        vr = xr[s];
        if (CX) vi = xi[s];
    }
    seg[j * L + i] = mk(vr, vi);
}

// work[q][j][k] = seg[j][k] H_q[k] inside q's band, zero elsewhere.
// Grid: x = bins / 256, y = segments, z = scales of this batch.
template <typename T>
__device__ __forceinline__ void product_body(const cpx<T>* __restrict__ seg, int L, int S,
                                             const cpx<T>* __restrict__ H, const long long* __restrict__ hoff,
                                             const int* __restrict__ blo, const int* __restrict__ blen, int q0,
                                             cpx<T>* __restrict__ work) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= L) return;
    const int j = blockIdx.y, q = blockIdx.z, f = q0 + q;
    const int b = (k - blo[f]) & (L - 1);
    cpx<T> v = mk((T)0, (T)0);
    if (b < blen[f]) v = seg[(long long)j * L + k] * H[hoff[f] + b];
    work[((long long)q * S + j) * L + k] = v;
}

// Grid: x = kept samples / 256, y = segments, z = scales of this batch.
template <typename T, int OUT>
__device__ __forceinline__ void store_body(const cpx<T>* __restrict__ work, int L, int S, int V,
                                           const int* __restrict__ frow, int q0, long long col_lo, long long col_hi,
                                           int hop, long long ncols_out, void* __restrict__ out) {
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= V) return;
    const int j = blockIdx.y, q = blockIdx.z;
    long long c = (long long)j * V + u;
    if (c < col_lo || c >= col_hi) return;
    c -= col_lo;
    if (hop > 1) {
        if (c % hop != 0) return;
        c /= hop;
    }
    const cpx<T> v = work[((long long)q * S + j) * L + u];
    store_value<T, OUT>(out, (long long)frow[q0 + q] * ncols_out + c, v.re, v.im);
}

#define GATHER(NAME, T, CX)                                                                                   \
    extern "C" __global__ void NAME(const T* xr, const T* xi, long long xlen, long long origin, int L, int V,  \
                                    cpx<T>* seg) {                                                            \
        gather_body<T, CX>(xr, xi, xlen, origin, L, V, seg);                                                  \
    }
#define PRODUCT(NAME, T)                                                                                      \
    extern "C" __global__ void NAME(const cpx<T>* seg, int L, int S, const cpx<T>* H, const long long* hoff,  \
                                    const int* blo, const int* blen, int q0, cpx<T>* work) {                  \
        product_body<T>(seg, L, S, H, hoff, blo, blen, q0, work);                                             \
    }
#define STORE(NAME, T, OUT)                                                                                   \
    extern "C" __global__ void NAME(const cpx<T>* work, int L, int S, int V, const int* frow, int q0,         \
                                    long long col_lo, long long col_hi, int hop, long long ncols_out,         \
                                    void* out) {                                                              \
        store_body<T, OUT>(work, L, S, V, frow, q0, col_lo, col_hi, hop, ncols_out, out);                     \
    }
// The host appends the instantiation it needs, e.g. `PRODUCT(kernel, float)`.
