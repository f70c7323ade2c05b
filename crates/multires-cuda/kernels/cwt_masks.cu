// Seed 000 III-A on the device: every mask in one packed array (shortest
// first), one thread per element. A thread finds its mask by walking the
// exclusive scan of the lengths from the largest mask down (most elements
// belong to the long masks, so most threads stop at once), then samples the
// mother wavelet in float64: m[k] = psi((k (1 + skew) + shift) den / num) amp.
//
// Then, for the overlap-save paths, each filter's correlation spectrum:
// masks padded into segments (MASK_PAD), cuFFT, the bins above the floor
// marked (SPECTRUM_FLAGS), and the kept band packed (SPECTRUM_PACK).

#define MR_PI 3.141592653589793

#define PSI_MORLET 0
#define PSI_CMOR 1
#define PSI_MEXH 2
#define PSI_GAUSS_POLY 3
#define PSI_SHANNON 4
#define PSI_FBSP 5
#define PSI_PAUL 6
#define PSI_FOURIER_SUM 7
#define PSI_SAMPLED 8

__device__ __forceinline__ double sinc_pi(double x) { return x == 0.0 ? 1.0 : sin(MR_PI * x) / (MR_PI * x); }

__device__ __forceinline__ cpx<double> polar(double r, double phi) {
    double s, c;
    sincos(phi, &s, &c);
    return mk(r * c, r * s);
}

// p: the family's numbers; table: its coefficients (complex values
// interleaved, or real weights); n: entries in table.
template <int FAM>
__device__ cpx<double> psi(double t, const double* __restrict__ p, const double* __restrict__ table, int n) {
    if (FAM == PSI_MORLET) {
        return mk(exp(-0.5 * t * t) * cos(5.0 * t), 0.0);
    } else if (FAM == PSI_CMOR) {
        const double b = p[0], c = p[1];
        return polar(exp(-(t * t) / b) / sqrt(MR_PI * b), 2.0 * MR_PI * c * t);
    } else if (FAM == PSI_MEXH) {
        const double k = 2.0 / (sqrt(3.0) * pow(MR_PI, 0.25));
        return mk(k * (1.0 - t * t) * exp(-0.5 * t * t), 0.0);
    } else if (FAM == PSI_GAUSS_POLY) {
        // q(t) exp(-a t^2) exp(-i c t), Horner from the highest power.
        cpx<double> q = mk(0.0, 0.0);
        for (int j = n - 1; j >= 0; --j) q = mk(q.re * t + table[2 * j], q.im * t + table[2 * j + 1]);
        cpx<double> v = q * polar(exp(-p[0] * t * t), -p[1] * t);
        if (p[2] != 0.0) v.im = 0.0;
        return v;
    } else if (FAM == PSI_SHANNON) {
        return polar(sqrt(p[0]) * sinc_pi(p[0] * t), 2.0 * MR_PI * p[1] * t);
    } else if (FAM == PSI_FBSP) {
        const int m = (int)p[0];
        const double s = sinc_pi(p[1] * t / p[0]);
        double env = 1.0;
        for (int j = 0; j < m; ++j) env *= s;
        return polar(sqrt(p[1]) * env, 2.0 * MR_PI * p[2] * t);
    } else if (FAM == PSI_PAUL) {
        // (i^m norm) (1 - i t)^-(m+1): p = {m, re(i^m norm), im(i^m norm)}.
        const int m = (int)p[0];
        const double d = 1.0 + t * t;
        const cpx<double> inv = mk(1.0 / d, t / d);  // 1 / (1 - i t)
        cpx<double> v = mk(1.0, 0.0);
        for (int j = 0; j <= m; ++j) v = v * inv;
        return mk(p[1], p[2]) * v;
    } else if (FAM == PSI_FOURIER_SUM) {
        // sum_j w_j e^{i j step t}, rotated and re-anchored every 64 terms.
        const double step = p[0];
        cpx<double> acc = mk(0.0, 0.0), z = mk(1.0, 0.0);
        const cpx<double> rot = polar(1.0, step * t);
        for (int j = 0; j < n; ++j) {
            if ((j & 63) == 0) z = polar(1.0, (double)j * step * t);
            acc = mk(acc.re + z.re * table[j], acc.im + z.im * table[j]);
            z = z * rot;
        }
        return acc;
    } else {
        // Catmull-Rom through n samples on [-b, b]; zero outside.
        const double b = p[0];
        if (!(t >= -b && t <= b)) return mk(0.0, 0.0);
        const double pos = (t + b) / (2.0 * b) * (double)(n - 1);
        int i = (int)floor(pos);
        if (i > n - 2) i = n - 2;
        const double u = pos - (double)i;
        cpx<double> s[4];
        for (int j = 0; j < 4; ++j) {
            int k = i - 1 + j;
            k = k < 0 ? 0 : (k > n - 1 ? n - 1 : k);
            s[j] = mk(table[2 * k], table[2 * k + 1]);
        }
        const double u2 = u * u, u3 = u2 * u;
        cpx<double> r;
        r.re = 0.5 * (2.0 * s[1].re + (s[2].re - s[0].re) * u + (2.0 * s[0].re - 5.0 * s[1].re + 4.0 * s[2].re - s[3].re) * u2 +
                      (3.0 * s[1].re - s[0].re - 3.0 * s[2].re + s[3].re) * u3);
        r.im = 0.5 * (2.0 * s[1].im + (s[2].im - s[0].im) * u + (2.0 * s[0].im - 5.0 * s[1].im + 4.0 * s[2].im - s[3].im) * u2 +
                      (3.0 * s[1].im - s[0].im - 3.0 * s[2].im + s[3].im) * u3);
        return r;
    }
}

// sampling: 5 numbers per mask {num, den, skew, shift, amplitude}.
template <int FAM>
__device__ __forceinline__ void masks_body(long long total, int nmasks, const long long* __restrict__ offsets,
                                           const int* __restrict__ half, const double* __restrict__ sampling,
                                           const double* __restrict__ p, const double* __restrict__ table, int n,
                                           double* __restrict__ re, double* __restrict__ im) {
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= total) return;
    int m = nmasks - 1;
    while (m > 0 && offsets[m] > gid) --m;
    const double* s = sampling + 5 * m;
    const double k = (double)(gid - offsets[m]) - (double)half[m];
    // Written out so the compiler fuses nothing: the CPU rounds the same way.
    const double t = __ddiv_rn(__dmul_rn(__dadd_rn(__dmul_rn(k, __dadd_rn(1.0, s[2])), s[3]), s[1]), s[0]);
    const cpx<double> v = psi<FAM>(t, p, table, n);
    re[gid] = v.re * s[4];
    im[gid] = v.im * s[4];
}

// The direct path's copy of its masks in the working precision: element
// gid of the destination belongs to the last mask whose dst_off <= gid.
template <typename T>
__device__ __forceinline__ void to_direct_body(long long total, int n, const long long* __restrict__ dst_off,
                                               const long long* __restrict__ src_off, const double* __restrict__ re,
                                               const double* __restrict__ im, T* __restrict__ mr,
                                               T* __restrict__ mi) {
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= total) return;
    int m = n - 1;
    while (m > 0 && dst_off[m] > gid) --m;
    const long long s = src_off[m] + (gid - dst_off[m]);
    mr[gid] = (T)re[s];
    mi[gid] = (T)im[s];
}

// buf[q][i] = m_f[i - hg] for |i - hg| <= h_f, else 0 (f = f0 + q), i < L.
// Grid: x = L / 256, y = filters of this chunk.
__device__ __forceinline__ void pad_body(int L, int hg, const long long* __restrict__ src_off,
                                         const int* __restrict__ half, int f0, const double* __restrict__ re,
                                         const double* __restrict__ im, cpx<double>* __restrict__ buf) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= L) return;
    const int q = blockIdx.y, f = f0 + q, h = half[f];
    const int j = i - (hg - h);
    cpx<double> v = mk(0.0, 0.0);
    if (j >= 0 && j <= 2 * h) v = mk(re[src_off[f] + j], im[src_off[f] + j]);
    buf[(long long)q * L + i] = v;
}

// One block per filter: bit k of flags[q] says |X[k]| > floor * max |X|.
__device__ __forceinline__ void flags_body(int L, double floor_rel, const cpx<double>* __restrict__ buf,
                                           unsigned* __restrict__ flags) {
    __shared__ double red[32];
    const int q = blockIdx.x;
    const cpx<double>* x = buf + (long long)q * L;
    double peak = 0.0;
    for (int k = threadIdx.x; k < L; k += blockDim.x) peak = fmax(peak, x[k].re * x[k].re + x[k].im * x[k].im);
    for (int o = 16; o > 0; o >>= 1) peak = fmax(peak, __shfl_xor_sync(0xffffffffu, peak, o));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    if (lane == 0) red[warp] = peak;
    __syncthreads();
    if (warp == 0) {
        peak = lane < nw ? red[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) peak = fmax(peak, __shfl_xor_sync(0xffffffffu, peak, o));
        if (lane == 0) red[0] = peak;
    }
    __syncthreads();
    const double thr = red[0] * floor_rel * floor_rel;
    const int words = (L + 31) >> 5;
    for (int base = 0; base < words * 32; base += blockDim.x) {
        const int k = base + threadIdx.x;
        const bool keep = k < L && (x[k].re * x[k].re + x[k].im * x[k].im) > thr;
        const unsigned w = __ballot_sync(0xffffffffu, keep);
        if (lane == 0 && (k >> 5) < words) flags[(long long)q * words + (k >> 5)] = w;
    }
}

// H[k] = conj(X[k]) / L over the band [lo, lo + blen) mod L: banded filters
// store the band in order at dst[b]; dense ones (dense != 0) all L bins in
// bit-reversed order, zero outside the band. Grid: x = bins / 256, y = filters.
template <typename T>
__device__ __forceinline__ void pack_body(int L, int f0, const cpx<double>* __restrict__ buf,
                                          const int* __restrict__ lo, const int* __restrict__ blen,
                                          const int* __restrict__ dense, const long long* __restrict__ dst_off,
                                          cpx<T>* __restrict__ dst) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    const int q = blockIdx.y, f = f0 + q;
    const double s = 1.0 / (double)L;
    const cpx<double>* x = buf + (long long)q * L;
    if (dense[f]) {
        if (b >= L) return;
        const bool in = ((b - lo[f]) & (L - 1)) < blen[f];
        const cpx<double> v = in ? x[b] : mk(0.0, 0.0);
        const int bits = 31 - __clz(L);
        const int slot = bits == 0 ? 0 : (int)(__brev((unsigned)b) >> (32 - bits));
        dst[dst_off[f] + slot] = mk((T)(v.re * s), (T)(-v.im * s));
    } else {
        if (b >= blen[f]) return;
        const cpx<double> v = x[(lo[f] + b) & (L - 1)];
        dst[dst_off[f] + b] = mk((T)(v.re * s), (T)(-v.im * s));
    }
}

#define MASKS(NAME, FAM)                                                                                       \
    extern "C" __global__ void NAME(long long total, int nmasks, const long long* offsets, const int* half,    \
                                    const double* sampling, const double* p, const double* table, int n,       \
                                    double* re, double* im) {                                                  \
        masks_body<FAM>(total, nmasks, offsets, half, sampling, p, table, n, re, im);                          \
    }
#define TO_DIRECT(NAME, T)                                                                                     \
    extern "C" __global__ void NAME(long long total, int n, const long long* dst_off, const long long* src_off, \
                                    const double* re, const double* im, T* mr, T* mi) {                        \
        to_direct_body<T>(total, n, dst_off, src_off, re, im, mr, mi);                                         \
    }
#define MASK_PAD(NAME)                                                                                         \
    extern "C" __global__ void NAME(int L, int hg, const long long* src_off, const int* half, int f0,          \
                                    const double* re, const double* im, cpx<double>* buf) {                    \
        pad_body(L, hg, src_off, half, f0, re, im, buf);                                                       \
    }
#define SPECTRUM_FLAGS(NAME)                                                                                   \
    extern "C" __global__ void NAME(int L, double floor_rel, const cpx<double>* buf, unsigned* flags) {        \
        flags_body(L, floor_rel, buf, flags);                                                                  \
    }
#define SPECTRUM_PACK(NAME, T)                                                                                 \
    extern "C" __global__ void NAME(int L, int f0, const cpx<double>* buf, const int* lo, const int* blen,     \
                                    const int* dense, const long long* dst_off, cpx<T>* dst) {                 \
        pack_body<T>(L, f0, buf, lo, blen, dense, dst_off, dst);                                               \
    }
// The host appends the instantiation it needs, e.g. `MASKS(kernel, 1)`.
