// The error-bounded codec on the device (multires::codec): lifting,
// quantization in Morton order, the encoder's own decode and outlier
// check, and the Rice coder's sizes and bits. Compiled with --fmad=false
// and written operation for operation as the CPU code, so every double is
// the same and the output is byte-identical. A launch covers a batch of
// bricks of one shape (blockIdx.y or .z is the brick).

#define INT_NONE (-2147483647 - 1)
#define MAX_INT_Q 1073741824.0

// Where line l along `axis` of the box starts in its brick (row-major).
__device__ __forceinline__ long long line_start(long long l, int axis, int d1, int d2, int e1, int e2) {
    if (axis == 2) return ((l / e1) * d1 + (l % e1)) * (long long)d2;
    if (axis == 1) return (l / e2) * (long long)d1 * d2 + (l % e2);
    return (l / e2) * (long long)d2 + (l % e2);
}

// The tile slot of line sample s: deinterleaved (evens, then odds) or as is.
__device__ __forceinline__ int tile_pos(int s, int ne, bool split) {
    return split ? ((s & 1) ? ne + (s >> 1) : (s >> 1)) : s;
}

// One lifting level along `axis` of the box e0 x e1 x e2 of bricks
// d0 x d1 x d2: tiles of `lt` lines in shared memory, deinterleaved (even
// samples, then odd), the steps of multires::codec::lifting, and back.
template <bool INV>
__device__ void lift_body(double* data, long long bstride, int d0, int d1, int d2, int e0, int e1,
                          int e2, int axis, int lt, int t, double w0, double w1, double w2,
                          double w3, double gl, double gh) {
    extern __shared__ double tile[];
    double* x = data + (long long)blockIdx.y * bstride;
    int n = axis == 2 ? e2 : (axis == 1 ? e1 : e0);
    if (n < 2) return;
    long long nlines = axis == 2 ? (long long)e0 * e1 : (axis == 1 ? (long long)e0 * e2 : (long long)e1 * e2);
    long long l0 = (long long)blockIdx.x * lt;
    if (l0 >= nlines) return;
    int P = n + 1, ne = (n + 1) / 2, nd = n / 2;
    long long ss = axis == 2 ? 1 : (axis == 1 ? (long long)d2 : (long long)d1 * d2);
    int total = lt * n;
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        int line, s;
        if (axis == 2) { line = idx / n; s = idx % n; } else { line = idx % lt; s = idx / lt; }
        long long l = l0 + line;
        if (l >= nlines) continue;
        long long b = line_start(l, axis, d1, d2, e1, e2);
        int p = tile_pos(s, ne, !INV);
        tile[line * P + p] = x[b + s * ss];
    }
    __syncthreads();
#define FOR(cnt)                                                              \
    for (int idx = threadIdx.x; idx < lt * (cnt); idx += blockDim.x) {        \
        int line = idx / (cnt), i = idx % (cnt);                              \
        double* e = tile + line * P;                                          \
        double* d = e + ne;
#define END \
    }       \
    __syncthreads();
#define PREDICT(w) FOR(nd) int j = min(i + 1, ne - 1); d[i] = d[i] + (w) * (e[i] + e[j]); END
#define UPDATE(w) FOR(ne) int a = min(max(i - 1, 0), nd - 1); int b = min(i, nd - 1); e[i] = e[i] + (w) * (d[a] + d[b]); END
    if (!INV) {
        if (t == 0) {
            FOR(nd) d[i] = d[i] - e[i]; END
            FOR(nd) e[i] = e[i] + 0.5 * d[i]; END
        } else if (t == 1) {
            PREDICT(w0) UPDATE(w1)
        } else {
            PREDICT(w0) UPDATE(w1) PREDICT(w2) UPDATE(w3)
        }
        FOR(n) e[i] = i < ne ? e[i] * gl : e[i] * gh; END
    } else {
        FOR(n) e[i] = i < ne ? e[i] / gl : e[i] / gh; END
        if (t == 0) {
            FOR(nd) e[i] = e[i] - 0.5 * d[i]; END
            FOR(nd) d[i] = d[i] + e[i]; END
        } else if (t == 1) {
            UPDATE(-w1) PREDICT(-w0)
        } else {
            UPDATE(-w3) PREDICT(-w2) UPDATE(-w1) PREDICT(-w0)
        }
    }
#undef FOR
#undef END
#undef PREDICT
#undef UPDATE
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        int line, s;
        if (axis == 2) { line = idx / n; s = idx % n; } else { line = idx % lt; s = idx / lt; }
        long long l = l0 + line;
        if (l >= nlines) continue;
        long long b = line_start(l, axis, d1, d2, e1, e2);
        int p = tile_pos(s, ne, INV);
        x[b + s * ss] = tile[line * P + p];
    }
}

#define LIFT(name, INV)                                                                          \
    extern "C" __global__ void name(double* data, long long bstride, int d0, int d1, int d2,      \
                                    int e0, int e1, int e2, int axis, int lt, int t, double w0,  \
                                    double w1, double w2, double w3, double gl, double gh) {     \
        lift_body<INV>(data, bstride, d0, d1, d2, e0, e1, e2, axis, lt, t, w0, w1, w2, w3, gl,   \
                       gh);                                                                      \
    }

// multires::codec::interp::predict: the same expressions in the same
// order (the file is compiled without FMA contraction). r is the line's
// first value, st its stride, i the position, s the level's stride.
__device__ __forceinline__ double interp_predict(const double* r, int st, int i, int s, int n) {
    bool left3 = i >= 3 * s, right1 = i + s < n, right3 = i + 3 * s < n;
    if (right1) {
        double b = r[(i - s) * st], c = r[(i + s) * st];
        if (left3 && right3) return (-r[(i - 3 * s) * st] + 9.0 * b + 9.0 * c - r[(i + 3 * s) * st]) / 16.0;
        if (right3) return (3.0 * b + 6.0 * c - r[(i + 3 * s) * st]) / 8.0;
        if (left3) return (-r[(i - 3 * s) * st] + 6.0 * b + 3.0 * c) / 8.0;
        return (b + c) / 2.0;
    }
    if (s >= 4 && i >= 5 * s)
        return (15.0 * r[(i - s) * st] - 10.0 * r[(i - 3 * s) * st] + 3.0 * r[(i - 5 * s) * st]) / 8.0;
    if (left3) return 1.5 * r[(i - s) * st] - 0.5 * r[(i - 3 * s) * st];
    return r[(i - s) * st];
}

// t / d for t below the pass's count, by the host's multiplier
// (`interp_divisor`): no division in the loop.
__device__ __forceinline__ unsigned interp_div(unsigned t, unsigned long long m, int sh) {
    return (unsigned)(((unsigned long long)t * m) >> sh);
}

// multires::codec::quantize, as a double: round half away from zero,
// clamped to +-2^30.
__device__ __forceinline__ double quant_value(double v, double s) {
    double r = round(v / s);
    return fmin(fmax(r, -MAX_INT_Q), MAX_INT_Q);
}

__device__ __forceinline__ double to_dtype(double v, int f32) {
    return f32 ? (double)__double2float_rn(v) : v;
}

// multires::codec::correction: whole steps of 2e, 0 when the exact value
// must be stored.
__device__ __forceinline__ int correction(double want, double got, double e, int f32) {
    if (!(e > 0.0 && isfinite(got))) return 0;
    double k = round((want - got) / (2.0 * e));
    if (k == 0.0 || fabs(k) > 2147483647.0) return 0;
    int ki = (int)k;
    double fixed = to_dtype(got + ((double)ki * 2.0) * e, f32);
    return fabs(want - fixed) <= e ? ki : 0;
}

// One value of the encoder's check of its own decode (a: the value, r: its
// reconstruction): its correction (INT_NONE where the bound holds), with
// the outlier and exact counts, the largest error and the squared error
// sum after correction added up.
__device__ __forceinline__ int check_point(double a, double r, double e, int f32, unsigned long long& no,
                                           unsigned long long& nr, double& m, double& s2) {
    double v = to_dtype(r, f32);
    double d = fabs(a - v);
    int c = INT_NONE;
    if (!(d <= e)) {
        c = correction(a, v, e, f32);
        no++;
        if (c == 0) {
            nr++;
            d = fabs(a - to_dtype(a, f32));
        } else {
            d = fabs(a - to_dtype(v + ((double)c * 2.0) * e, f32));
        }
    }
    m = fmax(m, d);
    s2 += d * d;
    return c;
}

// A block's check totals (see check_point) summed into brick b's: one set
// of atomics a block (a warp's own atomics cost more than the check when
// a thread holds a value or two, as in the interpolation's passes). Every
// thread of the block must call it.
__device__ __forceinline__ void check_totals(unsigned long long no, unsigned long long nr, double m,
                                             double s2, long long b, unsigned long long* counts,
                                             unsigned long long* maxe, double* sse) {
    __shared__ unsigned long long sno[32], snr[32];
    __shared__ double sm[32], ss[32];
    for (int o = 16; o > 0; o >>= 1) {
        no += __shfl_down_sync(0xffffffffu, no, o);
        nr += __shfl_down_sync(0xffffffffu, nr, o);
        m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
        s2 += __shfl_down_sync(0xffffffffu, s2, o);
    }
    int w = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        sno[w] = no;
        snr[w] = nr;
        sm[w] = m;
        ss[w] = s2;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < (int)(blockDim.x >> 5); i++) {
            no += sno[i];
            nr += snr[i];
            m = fmax(m, sm[i]);
            s2 += ss[i];
        }
        if (no) atomicAdd(&counts[2 * b], no);
        if (nr) atomicAdd(&counts[2 * b + 1], nr);
        atomicMax(&maxe[b], (unsigned long long)__double_as_longlong(m));
        atomicAdd(&sse[b], s2);
    }
}

// Where point (z, y, x) of brick b (origin org[3b..3b+3]) lies in a
// field of Y x X planes: INTERP's placing and GATHER/SCATTER's.
__device__ __forceinline__ long long field_index(long long b, long long z, long long y, long long x,
                                                 const long long* org, long long Y, long long X) {
    return ((org[3 * b] + z) * Y + org[3 * b + 1] + y) * X + org[3 * b + 2] + x;
}

// One pass of multires::codec::interp over every brick of a batch
// (blockIdx.y): the points o[a] + i * st[a] (cnt[a] per axis). axis 3:
// the anchors, predicted by 0. Forward: x in, each quantized detail into
// qi at its place in the coding order (qinv; null: the pass order, where
// the pass's t-th point is at qbase + t), the reconstruction into y
// where a later pass predicts from it (keep_y: all but the last pass,
// half the points), and the encoder's check of its own decode (CHECK) as
// each value is reconstructed: a point is reconstructed once, in one
// pass. An outlier's correction goes to corr and its bit into omask
// (zeroed before; the other points' corr is not written). x32: the input
// as float32 instead of x; with porg, x32 is a float32 field (brick
// origins porg, planes of pY rows of pX), read where the bricks lie
// (no gathered copy: GATHER then only takes the peaks), and an exact
// outlier's value goes to place at its place in the batch. Inverse: c in
// place; with di given, each point's detail is read from the decoded
// integers instead (at dinv, or qbase + t); with `place`, each value also rounded to float32
// there, at its place in a field (brick origins porg, planes of pY rows
// of pX) or in the batch (porg null): SCATTER's or TO_DTYPE's pass over
// the batch's doubles, saved.
#define INTERP(name, INV)                                                                      \
    extern "C" __global__ void name(const double* x, const float* x32, double* c, double* y,   \
                                    const double* q, double div, long long n, int d0, int d1,  \
                                    int d2, int axis,                                          \
                                    long long s, long long o0, long long st0, long long o1,    \
                                    long long st1, long long o2, long long st2, long long c0,  \
                                    long long c1, long long c2, const int* di,                 \
                                    const unsigned* dinv, int* qi, const unsigned* qinv,       \
                                    int* corr, double e, int f32, unsigned long long* counts,  \
                                    unsigned long long* maxe, double* sse, unsigned* omask,    \
                                    float* place, const long long* porg, long long pY,         \
                                    long long pX, unsigned long long m2, int sh2,              \
                                    unsigned long long m1, int sh1, int keep_y,                \
                                    long long qbase) {                                         \
        long long b = blockIdx.y;                                                              \
        double qs = q[b] / div;                                                                \
        unsigned cnt = (unsigned)(c0 * c1 * c2);                                               \
        unsigned long long no = 0, nr = 0;                                                     \
        double m = 0.0, s2 = 0.0;                                                              \
        /* A pass covers at most a brick (under 2^31 values): 32-bit */                        \
        /* index arithmetic, several times cheaper than 64-bit.       */                       \
        unsigned cu1 = (unsigned)c1, cu2 = (unsigned)c2;                                       \
        int io0 = (int)o0, io1 = (int)o1, io2 = (int)o2;                                       \
        int ist0 = (int)st0, ist1 = (int)st1, ist2 = (int)st2;                                 \
        int stv = axis == 0 ? d1 * d2 : (axis == 1 ? d2 : 1);                                  \
        int len = axis == 0 ? d0 : (axis == 1 ? d1 : d2);                                      \
        const double* xb = x + b * n;                                                          \
        double* cb = c + b * n;                                                                \
        double* yb = y + b * n;                                                                \
        for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < cnt;                      \
             t += gridDim.x * blockDim.x) {                                                    \
            unsigned row = interp_div(t, m2, sh2), ix = t - row * cu2;                         \
            unsigned iz = interp_div(row, m1, sh1), iy = row - iz * cu1;                       \
            int z = io0 + (int)iz * ist0, yy = io1 + (int)iy * ist1, xx = io2 + (int)ix * ist2; \
            unsigned local = (unsigned)((z * d1 + yy) * d2 + xx);                              \
            double pred = 0.0;                                                                 \
            if (axis != 3) {                                                                   \
                int pos = axis == 0 ? z : (axis == 1 ? yy : xx);                               \
                pred = interp_predict((INV ? cb : yb) + local - pos * stv, stv, pos, (int)s, len); \
            }                                                                                  \
            if (INV) {                                                                         \
                /* The detail straight from the decoded integers (their  */                    \
                /* place in the coding order: dinv), or from c.          */                    \
                double dv = di ? (double)di[b * n + (dinv ? dinv[local] : (unsigned)qbase + t)] \
                               : cb[local];                                                    \
                double v = axis == 3 ? dv * qs : pred + dv * qs;                               \
                cb[local] = v;                                                                 \
                if (place) {                                                                   \
                    long long at = porg ? field_index(b, z, yy, xx, porg, pY, pX) : b * n + local; \
                    place[at] = __double2float_rn(v);                                          \
                }                                                                              \
            } else {                                                                           \
                double a = x32 ? (double)x32[porg ? field_index(b, z, yy, xx, porg, pY, pX)    \
                                                  : b * n + local]                             \
                               : xb[local];                                                    \
                double v = quant_value(axis == 3 ? a : a - pred, qs);                          \
                double r = axis == 3 ? v * qs : pred + v * qs;                                 \
                if (keep_y) yb[local] = r;                                                     \
                qi[b * n + (qinv ? qinv[local] : (unsigned)qbase + t)] = (int)v;               \
                int cv = check_point(a, r, e, f32, no, nr, m, s2);                             \
                if (cv != INT_NONE) {                                                          \
                    corr[b * n + local] = cv;                                                  \
                    atomicOr(&omask[b * ((n + 31) >> 5) + (local >> 5)], 1u << (local & 31)); \
                    /* An exact outlier read from the field: its value */                      \
                    /* where OWRITE_MASK reads the batch's input.      */                      \
                    if (cv == 0 && place) place[b * n + local] = (float)a;                     \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        if (!INV) check_totals(no, nr, m, s2, b, counts, maxe, sse);                           \
    }

// Bricks as stored (float or double) to the doubles the codec works in.
#define TO_F64(name, T)                                                                 \
    extern "C" __global__ void name(const T* in, double* out, long long count) {        \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;  \
             i += (long long)gridDim.x * blockDim.x)                                    \
            out[i] = (double)in[i];                                                     \
    }

// Quantized coefficients in Morton order (multires::codec::quantize);
// q[b] is brick b's step. ints is [brick][n].
#define QUANT(name)                                                                           \
    extern "C" __global__ void name(const double* c, const unsigned* order, const double* q,  \
                                    int* ints, long long n) {                                 \
        long long b = blockIdx.y;                                                             \
        double s = q[b];                                                                      \
        for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;            \
             j += (long long)gridDim.x * blockDim.x) {                                        \
            ints[b * n + j] = (int)quant_value(c[b * n + order[j]], s);                       \
        }                                                                                     \
    }

// Quantized coefficients back to doubles at their grid points: inv[k] is
// grid point k's place in the coding order (a gather; the scatter through
// the order wrote 8 scattered bytes a value).
#define DEQUANT(name)                                                                      \
    extern "C" __global__ void name(const int* ints, const unsigned* inv, const double* q, \
                                    double* y, long long n) {                              \
        long long b = blockIdx.y;                                                          \
        double s = q[b];                                                                   \
        for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;        \
             k += (long long)gridDim.x * blockDim.x)                                       \
            y[b * n + k] = (double)ints[b * n + inv[k]] * s;                               \
    }

// The encoder's check of its own decode: corr[k] = INT_NONE where the value
// holds the bound, else its correction. Per brick: outlier and exact
// counts, the largest error and the squared error sum after correction.
#define CHECK(name)                                                                              \
    extern "C" __global__ void name(const double* x, const double* y, int* corr, long long n,     \
                                    double e, int f32, unsigned long long* counts,                \
                                    unsigned long long* maxe, double* sse) {                       \
        long long b = blockIdx.y;                                                                \
        unsigned long long no = 0, nr = 0;                                                       \
        double m = 0.0, s2 = 0.0;                                                                \
        for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;               \
             k += (long long)gridDim.x * blockDim.x)                                             \
            corr[b * n + k] = check_point(x[b * n + k], y[b * n + k], e, f32, no, nr, m, s2);    \
        check_totals(no, nr, m, s2, b, counts, maxe, sse);                                       \
    }

__device__ __forceinline__ unsigned zigzag(int i) { return ((unsigned)i << 1) ^ (unsigned)(i >> 31); }

// A warp's block of 32 values (lane = position): Rice parameter or SPARSE
// (multires::codec::rice::block_mode), and its sizes in bits.
struct BlockCode {
    unsigned mode, nz, kbits, cbits, low, unary;
};

__device__ BlockCode block_code(unsigned v) {
    BlockCode r;
    unsigned ball = __ballot_sync(0xffffffffu, v != 0);
    r.nz = __popc(ball);
    if (r.nz == 0) {
        r.mode = 0; r.kbits = 0; r.cbits = 0; r.low = 0; r.unary = 0;
        return r;
    }
    auto wsum = [](unsigned long long a) {
        for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
        return a;
    };
    unsigned k = 0;
    unsigned long long s = wsum(v);
    unsigned long long total = s;
    while (k < 31) {
        unsigned long long s1 = wsum(v >> (k + 1));
        if (32ull + s1 < s) { k++; s = s1; } else break;
    }
    unsigned long long rice = 32ull * (k + 1) + s;
    unsigned long long sparse = 5ull + 6ull * r.nz + total - r.nz;
    r.kbits = 5;
    if (r.nz <= 8 && sparse < rice) {
        r.mode = 31; r.cbits = 5; r.low = 5 * r.nz; r.unary = (unsigned)total;
    } else {
        r.mode = k; r.cbits = 0; r.low = 32 * k; r.unary = (unsigned)(32ull + s);
    }
    return r;
}

// Per Morton block of 32 (one warp each): nonzero flag, mode and section
// sizes in bits; with sums != null (the sizing pass) per-brick totals
// only. trial[b] picks brick b's quantization among the tried ones.
#define BSTATS(name)                                                                                \
    extern "C" __global__ void name(const int* ints, const int* trial, long long tstride, long long n, \
                                    long long nb, unsigned char* nzf, unsigned* mode,               \
                                    unsigned* sizes, unsigned long long* sums) {                    \
        long long b = blockIdx.y;                                                                   \
        const int* in = ints + (trial ? trial[b] : 0) * tstride + b * n;                            \
        int lane = threadIdx.x & 31;                                                                \
        unsigned long long acc[4] = {0, 0, 0, 0};                                                   \
        for (long long blk = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; blk < nb;    \
             blk += ((long long)gridDim.x * blockDim.x) >> 5) {                                     \
            long long j = blk * 32 + lane;                                                          \
            unsigned v = j < n ? zigzag(in[j]) : 0u;                                                \
            BlockCode c = block_code(v);                                                            \
            if (lane == 0) {                                                                        \
                nzf[b * nb + blk] = c.nz != 0;                                                      \
                if (sums) {                                                                         \
                    acc[0] += c.kbits; acc[1] += c.cbits; acc[2] += c.low; acc[3] += c.unary;       \
                } else {                                                                            \
                    mode[b * nb + blk] = c.mode;                                                    \
                    sizes[(b * 4 + 0) * nb + blk] = c.kbits;                                        \
                    sizes[(b * 4 + 1) * nb + blk] = c.cbits;                                        \
                    sizes[(b * 4 + 2) * nb + blk] = c.low;                                          \
                    sizes[(b * 4 + 3) * nb + blk] = c.unary;                                        \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        if (sums && lane == 0)                                                                      \
            for (int i = 0; i < 4; i++)                                                             \
                if (acc[i]) atomicAdd(&sums[b * 4 + i], acc[i]);                                    \
    }

// Exclusive scan in place of rows of `len` u32 (one thread block of 1024
// per row; grid.y rows); each row's total goes to totals[row].
#define SCAN(name)                                                                              \
    extern "C" __global__ void name(unsigned* data, long long len, unsigned long long* totals) { \
        /* Rows of the block's width at a time, so loads and stores are */                    \
        /* coalesced (a thread's own range of the row was not).        */                     \
        __shared__ unsigned long long ws[32];                                                   \
        unsigned* row = data + blockIdx.y * len;                                                \
        unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;           \
        unsigned long long carry = 0;                                                           \
        for (long long at = 0; at < len; at += blockDim.x) {                                    \
            long long i = at + threadIdx.x;                                                     \
            unsigned v = i < len ? row[i] : 0u;                                                 \
            unsigned long long x = v;                                                           \
            for (int o = 1; o < 32; o <<= 1) {                                                  \
                unsigned long long y = __shfl_up_sync(0xffffffffu, x, o);                       \
                if (lane >= (unsigned)o) x += y;                                                \
            }                                                                                   \
            if (lane == 31) ws[w] = x;                                                          \
            __syncthreads();                                                                    \
            if (w == 0) {                                                                       \
                unsigned long long t = lane < nw ? ws[lane] : 0;                                \
                for (int o = 1; o < 32; o <<= 1) {                                              \
                    unsigned long long y = __shfl_up_sync(0xffffffffu, t, o);                   \
                    if (lane >= (unsigned)o) t += y;                                            \
                }                                                                               \
                ws[lane] = t;                                                                   \
            }                                                                                   \
            __syncthreads();                                                                    \
            if (i < len) row[i] = (unsigned)(carry + (w > 0 ? ws[w - 1] : 0) + x - v);          \
            carry += ws[nw - 1];                                                                \
            __syncthreads();                                                                    \
        }                                                                                       \
        if (threadIdx.x == 0) totals[blockIdx.y] = carry;                                       \
    }

// The significance map of each brick (multires::codec::rice): levels in
// shared memory, the count of stored words to map_words[b]; with out !=
// null, the stored words themselves at out + ofs[b] (a byte offset).
#define MAP(name)                                                                                  \
    extern "C" __global__ void name(const unsigned char* nzf, long long nb, int levels,            \
                                    unsigned* map_words, unsigned char* out,                       \
                                    const unsigned long long* ofs) {                               \
        extern __shared__ unsigned lv[];                                                           \
        long long b = blockIdx.x;                                                                  \
        long long w0 = (nb + 31) / 32;                                                             \
        for (long long w = threadIdx.x; w < w0; w += blockDim.x) {                                 \
            unsigned m = 0;                                                                        \
            for (int i = 0; i < 32; i++) {                                                         \
                long long blk = w * 32 + i;                                                        \
                if (blk < nb && nzf[b * nb + blk]) m |= 1u << i;                                   \
            }                                                                                      \
            lv[w] = m;                                                                             \
        }                                                                                          \
        __syncthreads();                                                                           \
        /* level j's words start at start[j]; level j+1 has a bit per word of j */                 \
        long long start[8], words[8];                                                              \
        start[0] = 0; words[0] = w0;                                                               \
        for (int j = 1; j < levels; j++) {                                                         \
            start[j] = start[j - 1] + words[j - 1];                                                \
            words[j] = (words[j - 1] + 31) / 32;                                                   \
            for (long long w = threadIdx.x; w < words[j]; w += blockDim.x) {                       \
                unsigned m = 0;                                                                    \
                for (int i = 0; i < 32; i++) {                                                     \
                    long long c = w * 32 + i;                                                      \
                    if (c < words[j - 1] && lv[start[j - 1] + c]) m |= 1u << i;                    \
                }                                                                                  \
                lv[start[j] + w] = m;                                                              \
            }                                                                                      \
            __syncthreads();                                                                       \
        }                                                                                          \
        if (threadIdx.x == 0) {                                                                    \
            unsigned cnt = 1;                                                                      \
            unsigned* o = out ? (unsigned*)(out + ofs[b]) : 0;                                     \
            if (o) o[0] = lv[start[levels - 1]];                                                   \
            for (int j = levels - 2; j >= 0; j--)                                                  \
                for (long long w = 0; w < words[j]; w++) {                                         \
                    unsigned m = lv[start[j] + w];                                                 \
                    if (m) {                                                                       \
                        if (o) o[cnt] = m;                                                         \
                        cnt++;                                                                     \
                    }                                                                              \
                }                                                                                  \
            map_words[b] = cnt;                                                                    \
        }                                                                                          \
    }

__device__ __forceinline__ void put_bits(unsigned* w, unsigned long long bit, unsigned v, unsigned nbits) {
    if (nbits == 0) return;
    if (nbits < 32) v &= (1u << nbits) - 1;
    unsigned long long word = bit >> 5;
    unsigned o = bit & 31;
    atomicOr(&w[word], v << o);
    if (o + nbits > 32) atomicOr(&w[word + 1], v >> (32 - o));
}

// The Rice sections of each brick: one warp per block of 32, at the offsets
// the scans gave (in bits, from each section's start; sec[b*4 + i] is the
// byte offset of brick b's k, count, low and unary sections in out).
#define WRITE(name)                                                                                 \
    extern "C" __global__ void name(const int* ints, const int* trial, long long tstride, long long n, \
                                    long long nb, const unsigned* mode, const unsigned* ofs,         \
                                    const unsigned long long* sec, unsigned char* out) {              \
        long long b = blockIdx.y;                                                                   \
        const int* in = ints + trial[b] * tstride + b * n;                                          \
        int lane = threadIdx.x & 31;                                                                \
        unsigned* ks = (unsigned*)(out + sec[b * 4 + 0]);                                           \
        unsigned* cs = (unsigned*)(out + sec[b * 4 + 1]);                                           \
        unsigned* lw = (unsigned*)(out + sec[b * 4 + 2]);                                           \
        unsigned* uw = (unsigned*)(out + sec[b * 4 + 3]);                                           \
        for (long long blk = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; blk < nb;    \
             blk += ((long long)gridDim.x * blockDim.x) >> 5) {                                     \
            long long j = blk * 32 + lane;                                                          \
            unsigned v = j < n ? zigzag(in[j]) : 0u;                                                \
            unsigned ball = __ballot_sync(0xffffffffu, v != 0);                                     \
            if (!ball) continue;                                                                    \
            unsigned k = mode[b * nb + blk];                                                        \
            const unsigned* o = ofs + b * 4 * nb + blk;                                             \
            unsigned ko = o[0], co = o[nb], lo = o[2 * nb], uo = o[3 * nb];                         \
            unsigned below = __popc(ball & ((1u << lane) - 1));                                     \
            unsigned len;                                                                           \
            if (k == 31) {                                                                          \
                if (lane == 0) { put_bits(ks, ko, 31, 5); put_bits(cs, co, __popc(ball) - 1, 5); }  \
                if (v) put_bits(lw, lo + 5ull * below, lane, 5);                                    \
                len = v;                                                                            \
            } else {                                                                                \
                if (lane == 0) put_bits(ks, ko, k, 5);                                              \
                put_bits(lw, lo + (unsigned long long)lane * k, v, k);                              \
                len = (v >> k) + 1;                                                                 \
            }                                                                                       \
            unsigned pre = len;                                                                     \
            for (int d = 1; d < 32; d <<= 1) {                                                      \
                unsigned t = __shfl_up_sync(0xffffffffu, pre, d);                                   \
                if (lane >= d) pre += t;                                                            \
            }                                                                                       \
            if (len) put_bits(uw, uo + (unsigned long long)pre - 1, 1, 1);                          \
        }                                                                                           \
    }

// Outlier counts per row-major block of 32 of the chosen trial (for the
// scans): cnt[(b*2)*nb + blk] outliers, cnt[(b*2+1)*nb + blk] exact ones.
#define OCOUNT(name)                                                                                \
    extern "C" __global__ void name(const int* corr, const int* trial, long long tstride, long long n, \
                                    long long nb, unsigned* cnt) {                                   \
        long long b = blockIdx.y;                                                                   \
        const int* c = corr + trial[b] * tstride + b * n;                                           \
        int lane = threadIdx.x & 31;                                                                \
        for (long long blk = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; blk < nb;    \
             blk += ((long long)gridDim.x * blockDim.x) >> 5) {                                     \
            long long j = blk * 32 + lane;                                                          \
            int v = j < n ? c[j] : INT_NONE;                                                        \
            unsigned bo = __ballot_sync(0xffffffffu, v != INT_NONE);                                \
            unsigned br = __ballot_sync(0xffffffffu, v == 0);                                       \
            if (lane == 0) {                                                                        \
                cnt[(b * 2) * nb + blk] = __popc(bo);                                               \
                cnt[(b * 2 + 1) * nb + blk] = __popc(br);                                           \
            }                                                                                       \
        }                                                                                           \
    }

// Exact value r of an outlier list, as stored: float32, or float64 as two
// words (OWRITE and OWRITE_MASK).
__device__ __forceinline__ void put_exact(unsigned* raw, unsigned r, double a, int f32) {
    if (f32) {
        raw[r] = __float_as_uint(__double2float_rn(a));
    } else {
        unsigned long long u = (unsigned long long)__double_as_longlong(a);
        raw[2 * r] = (unsigned)u;
        raw[2 * r + 1] = (unsigned)(u >> 32);
    }
}

// The outlier lists: indices, corrections, exact values (as stored), at
// the scanned offsets; osec[b*3 + i] are the byte offsets of the three.
#define OWRITE(name)                                                                                 \
    extern "C" __global__ void name(const double* x, const int* corr, const int* trial, long long tstride, \
                                    long long n, long long nb, const unsigned* cnt,                   \
                                    const unsigned long long* osec, int f32, unsigned char* out) {     \
        long long b = blockIdx.y;                                                                    \
        const int* c = corr + trial[b] * tstride + b * n;                                            \
        int lane = threadIdx.x & 31;                                                                 \
        unsigned* idx = (unsigned*)(out + osec[b * 3]);                                              \
        int* cw = (int*)(out + osec[b * 3 + 1]);                                                     \
        unsigned* raw = (unsigned*)(out + osec[b * 3 + 2]);                                          \
        for (long long blk = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; blk < nb;     \
             blk += ((long long)gridDim.x * blockDim.x) >> 5) {                                      \
            long long j = blk * 32 + lane;                                                           \
            int v = j < n ? c[j] : INT_NONE;                                                         \
            unsigned bo = __ballot_sync(0xffffffffu, v != INT_NONE);                                 \
            unsigned br = __ballot_sync(0xffffffffu, v == 0);                                        \
            if (v == INT_NONE) continue;                                                             \
            unsigned lt = (1u << lane) - 1;                                                          \
            unsigned p = cnt[(b * 2) * nb + blk] + __popc(bo & lt);                                  \
            idx[p] = (unsigned)j;                                                                    \
            cw[p] = v;                                                                               \
            if (v == 0) {                                                                            \
                unsigned r = cnt[(b * 2 + 1) * nb + blk] + __popc(br & lt);                          \
                put_exact(raw, r, x[b * n + j], f32);                                                \
            }                                                                                        \
        }                                                                                            \
    }

// OCOUNT for the interpolation, whose outliers are marked in omask (a
// bit a value, nb words a brick; corr holds only theirs): a thread a
// word, so the counts of a block of 32 cost a 4-byte read, not 32 reads
// of corr and a thread each.
#define OCOUNT_MASK(name)                                                                          \
    extern "C" __global__ void name(const int* corr, const unsigned* omask, long long n,           \
                                    long long nb, unsigned* cnt) {                                 \
        long long b = blockIdx.y;                                                                  \
        const int* c = corr + b * n;                                                               \
        for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < nb;           \
             blk += (long long)gridDim.x * blockDim.x) {                                           \
            unsigned w = omask[b * nb + blk], nr = 0;                                              \
            for (unsigned m = w; m; m &= m - 1) nr += c[blk * 32 + __ffs(m) - 1] == 0;             \
            cnt[(b * 2) * nb + blk] = __popc(w);                                                   \
            cnt[(b * 2 + 1) * nb + blk] = nr;                                                      \
        }                                                                                          \
    }

// OWRITE for the interpolation (see OCOUNT_MASK): each marked value in
// index order; exact values from the input as stored (x, or x32 when
// given).
#define OWRITE_MASK(name)                                                                          \
    extern "C" __global__ void name(const double* x, const float* x32, const int* corr,            \
                                    const unsigned* omask, long long n, long long nb,              \
                                    const unsigned* cnt, const unsigned long long* osec, int f32,  \
                                    unsigned char* out) {                                          \
        long long b = blockIdx.y;                                                                  \
        const int* c = corr + b * n;                                                               \
        unsigned* idx = (unsigned*)(out + osec[b * 3]);                                            \
        int* cw = (int*)(out + osec[b * 3 + 1]);                                                   \
        unsigned* raw = (unsigned*)(out + osec[b * 3 + 2]);                                        \
        for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < nb;           \
             blk += (long long)gridDim.x * blockDim.x) {                                           \
            unsigned w = omask[b * nb + blk];                                                      \
            if (!w) continue;                                                                      \
            unsigned p = cnt[(b * 2) * nb + blk], r = cnt[(b * 2 + 1) * nb + blk];                 \
            for (unsigned m = w; m; m &= m - 1) {                                                  \
                long long j = blk * 32 + __ffs(m) - 1;                                             \
                int v = c[j];                                                                      \
                idx[p] = (unsigned)j;                                                              \
                cw[p++] = v;                                                                       \
                if (v == 0) put_exact(raw, r++, x32 ? (double)x32[b * n + j] : x[b * n + j], f32); \
            }                                                                                      \
        }                                                                                          \
    }

// ---- Decoding (multires::codec::rice::decode, in parallel) ----

// Bits [bit, bit + n) of a section of `len` words; past the end sets *err.
__device__ __forceinline__ unsigned get_bits(const unsigned* w, unsigned long long len,
                                             unsigned long long bit, unsigned n, unsigned* err) {
    if (n == 0) return 0;
    unsigned long long i = bit >> 5;
    unsigned o = bit & 31;
    if (i >= len || (o + n > 32 && i + 1 >= len)) {
        *err = 1;
        return 0;
    }
    unsigned long long v = (unsigned long long)w[i] >> o;
    if (o + n > 32) v |= (unsigned long long)w[i + 1] << (32 - o);
    return (unsigned)(v & ((1ull << n) - 1));
}

// Per brick (one block each), the stored significance map expanded to a
// flag per block of 32: nz (u8) and nz32 (u32, for the rank scan).
// sec[b*5 + i] and secw[b*5 + i]: word offset in `words` and length of brick
// b's map, k, count, low and unary sections; mapw[b] its map words.
#define DMAP(name)                                                                                 \
    extern "C" __global__ void name(const unsigned* words, const unsigned long long* sec,          \
                                    const unsigned* mapw, long long nb, int levels,                \
                                    unsigned char* nz, unsigned* nz32, unsigned* err) {            \
        extern __shared__ unsigned lv[];                                                           \
        long long b = blockIdx.x;                                                                  \
        long long start[8], nw[8];                                                                 \
        start[0] = 0; nw[0] = (nb + 31) / 32;                                                      \
        for (int j = 1; j < levels; j++) { start[j] = start[j - 1] + nw[j - 1]; nw[j] = (nw[j - 1] + 31) / 32; } \
        long long total = start[levels - 1] + nw[levels - 1];                                      \
        for (long long i = threadIdx.x; i < total; i += blockDim.x) lv[i] = 0;                    \
        __syncthreads();                                                                           \
        if (threadIdx.x == 0) {                                                                    \
            const unsigned* m = words + sec[b * 5];                                                \
            unsigned mw = mapw[b], used = 0;                                                       \
            if (mw < 1) err[b] = 1; else lv[start[levels - 1]] = m[used++];                        \
            for (int j = levels - 2; j >= 0 && !err[b]; j--)                                       \
                for (long long pw = 0; pw < nw[j + 1]; pw++) {                                     \
                    unsigned bits = lv[start[j + 1] + pw];                                         \
                    while (bits) {                                                                 \
                        long long w = pw * 32 + __ffs(bits) - 1;                                   \
                        bits &= bits - 1;                                                          \
                        if (w >= nw[j] || used >= mw || m[used] == 0) { err[b] = 1; break; }       \
                        lv[start[j] + w] = m[used++];                                              \
                    }                                                                              \
                }                                                                                  \
            if (used != mw) err[b] = 1;                                                            \
        }                                                                                          \
        __syncthreads();                                                                           \
        for (long long blk = threadIdx.x; blk < nb; blk += blockDim.x) {                           \
            unsigned f = (lv[blk >> 5] >> (blk & 31)) & 1;                                         \
            nz[b * nb + blk] = f;                                                                  \
            nz32[b * nb + blk] = f;                                                                \
        }                                                                                          \
        for (long long w = nb / 32 + threadIdx.x; w < nw[0]; w += blockDim.x)                      \
            if (nb % 32 && w == nb / 32 && (lv[w] >> (nb % 32))) err[b] = 1;                       \
    }

// Per block (a thread each): its mode from the k section (by nonzero rank),
// the sparse flag; then (DSIZE) its low bits and ones from the counts.
#define DMODE(name)                                                                                \
    extern "C" __global__ void name(const unsigned* words, const unsigned long long* sec,          \
                                    const unsigned* secw, long long nb, const unsigned char* nz,   \
                                    const unsigned* rank, unsigned* mode, unsigned* sp, unsigned* err) { \
        long long b = blockIdx.y;                                                                  \
        for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < nb;           \
             blk += (long long)gridDim.x * blockDim.x) {                                           \
            long long i = b * nb + blk;                                                            \
            unsigned k = 0;                                                                        \
            if (nz[i]) k = get_bits(words + sec[b * 5 + 1], secw[b * 5 + 1], 5ull * rank[i], 5, &err[b]); \
            mode[i] = k;                                                                           \
            sp[i] = nz[i] && k == 31;                                                              \
        }                                                                                          \
    }

#define DSIZE(name)                                                                                \
    extern "C" __global__ void name(const unsigned* words, const unsigned long long* sec,          \
                                    const unsigned* secw, long long nb, const unsigned char* nz,   \
                                    const unsigned* mode, const unsigned* sprank, unsigned* low,   \
                                    unsigned* ones, unsigned* err) {                               \
        long long b = blockIdx.y;                                                                  \
        for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < nb;           \
             blk += (long long)gridDim.x * blockDim.x) {                                           \
            long long i = b * nb + blk;                                                            \
            unsigned l = 0, o = 0;                                                                 \
            if (nz[i]) {                                                                           \
                if (mode[i] == 31) {                                                               \
                    unsigned c = get_bits(words + sec[b * 5 + 2], secw[b * 5 + 2], 5ull * sprank[i], 5, &err[b]) + 1; \
                    l = 5 * c; o = c;                                                              \
                } else { l = 32 * mode[i]; o = 32; }                                               \
            }                                                                                      \
            low[i] = l; ones[i] = o;                                                               \
        }                                                                                          \
    }

// Ones per word of each brick's unary section (rows of `stride` words).
#define POPC(name)                                                                                 \
    extern "C" __global__ void name(const unsigned* words, const unsigned long long* sec,          \
                                    const unsigned* secw, long long stride, unsigned* pc) {        \
        long long b = blockIdx.y;                                                                  \
        const unsigned* u = words + sec[b * 5 + 4];                                                \
        long long len = secw[b * 5 + 4];                                                           \
        for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < stride;           \
             w += (long long)gridDim.x * blockDim.x)                                               \
            pc[b * stride + w] = w < len ? __popc(u[w]) : 0;                                       \
    }

__device__ __forceinline__ int unzigzag(unsigned v) { return (int)(v >> 1) ^ -(int)(v & 1); }

// Per block (a thread each): its values, from the low bits at its scanned
// offset and the unary codes after its scanned count of ones.
#define DECODE(name)                                                                               \
    extern "C" __global__ void name(const unsigned* words, const unsigned long long* sec,          \
                                    const unsigned* secw, long long n, long long nb,               \
                                    const unsigned char* nz, const unsigned* mode,                 \
                                    const unsigned* sprank, const unsigned* lowofs,                \
                                    const unsigned* onesofs, const unsigned* pc, long long stride, \
                                    int* ints, unsigned* err) {                                    \
        long long b = blockIdx.y;                                                                  \
        const unsigned* lw = words + sec[b * 5 + 3];                                               \
        const unsigned* uw = words + sec[b * 5 + 4];                                               \
        unsigned long long llen = secw[b * 5 + 3], ulen = secw[b * 5 + 4];                         \
        const unsigned* pp = pc + b * stride;                                                      \
        for (long long blk = blockIdx.x * (long long)blockDim.x + threadIdx.x; blk < nb;           \
             blk += (long long)gridDim.x * blockDim.x) {                                           \
            long long i = b * nb + blk;                                                            \
            int* out = ints + b * n + blk * 32;                                                    \
            int cnt = (int)min(32ll, n - blk * 32);                                                \
            for (int l = 0; l < cnt; l++) out[l] = 0;                                              \
            if (!nz[i]) continue;                                                                  \
            unsigned k = mode[i];                                                                  \
            unsigned long long t = onesofs[i], bit = 0;                                            \
            if (t > 0) {                                                                           \
                /* the word holding one number t-1: largest w with pp[w] <= t-1 */                 \
                long long lo = 0, hi = (long long)ulen - 1;                                        \
                if (hi < 0) { err[b] = 1; continue; }                                              \
                while (lo < hi) {                                                                  \
                    long long mid = (lo + hi + 1) / 2;                                             \
                    if (pp[mid] <= t - 1) lo = mid; else hi = mid - 1;                             \
                }                                                                                  \
                unsigned x = uw[lo];                                                               \
                unsigned r = (unsigned)(t - 1 - pp[lo]);                                           \
                if (r >= (unsigned)__popc(x)) { err[b] = 1; continue; }                            \
                for (unsigned s = 0; s < r; s++) x &= x - 1;                                       \
                bit = (unsigned long long)lo * 32 + __ffs(x);                                      \
            }                                                                                      \
            unsigned long long lbit = lowofs[i];                                                   \
            unsigned nvals = 32;                                                                   \
            if (k == 31) nvals = get_bits(words + sec[b * 5 + 2], secw[b * 5 + 2], 5ull * sprank[i], 5, &err[b]) + 1; \
            for (unsigned v = 0; v < nvals; v++) {                                                 \
                unsigned long long z = 0;                                                          \
                for (;;) {                                                                         \
                    unsigned long long w = bit >> 5;                                               \
                    if (w >= ulen) { err[b] = 1; break; }                                          \
                    unsigned x = uw[w] >> (bit & 31);                                              \
                    if (x) { unsigned tz = __ffs(x) - 1; z += tz; bit += tz + 1; break; }          \
                    z += 32 - (bit & 31); bit += 32 - (bit & 31);                                  \
                }                                                                                  \
                if (err[b]) break;                                                                 \
                if (k == 31) {                                                                     \
                    unsigned p = get_bits(lw, llen, lbit + 5ull * v, 5, &err[b]);                  \
                    if (z + 1 > 0xffffffffull) { err[b] = 1; break; }                              \
                    if ((long long)p < cnt) out[p] = unzigzag((unsigned)(z + 1));                  \
                } else {                                                                           \
                    unsigned lowv = get_bits(lw, llen, lbit + (unsigned long long)v * k, k, &err[b]); \
                    if (z > (0xffffffffull >> k)) { err[b] = 1; break; }                           \
                    if ((int)v < cnt) out[v] = unzigzag(((unsigned)z << k) | lowv);                \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

// Decoded doubles to the stored type (round to nearest, as DType::round).
#define TO_DTYPE(name, T)                                                               \
    extern "C" __global__ void name(const double* in, T* out, long long count) {        \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;  \
             i += (long long)gridDim.x * blockDim.x)                                    \
            out[i] = (T)in[i];                                                          \
    }

// ---- rANS (multires::codec::rans): the interpolating wavelet's coder ----
// A chunk per thread: chunk c is values [cstart[c], cstart[c] + clen[c])
// of brick cbrick[c]; tables per brick: freq [ctx][sym], cum
// [ctx][sym + 1], scale [ctx].

#define R_NSYM 168
#define R_NCTX 32
#define R_DIRECT 64u
#define R_PIECE 14u
// The coders' context restart (rans::RESET: the streams this build writes);
// RDEC takes each brick's from its stream's header (older streams: 4096).
#define R_RESET 2048ll
#define R_L 65536u

__device__ __forceinline__ void r_symbol(unsigned v, unsigned& s, unsigned& nraw, unsigned& raw) {
    if (v < R_DIRECT) {
        s = v; nraw = 0; raw = 0;
        return;
    }
    unsigned b = 32 - __clz(v);
    nraw = b - 3;
    s = R_DIRECT + 4 * (b - 7) + ((v >> nraw) & 3);
    raw = v & ((1u << nraw) - 1);
}
__device__ __forceinline__ unsigned r_raw_bits(unsigned s) { return s < R_DIRECT ? 0 : (s - R_DIRECT) / 4 + 4; }
__device__ __forceinline__ unsigned r_context(unsigned lv, unsigned prev) { return min(lv, 7u) * 4 + min(prev, 3u); }

// Counts per brick, context and symbol (a shared histogram per block).
// A warp takes R_HIST_UNROLL rows of 32 consecutive values a step, every
// row's loads issued before any is used (one row a step waited on its
// loads). When all of them share a bin (nearly every step on a smooth
// field) lane 0 adds them to a running count; otherwise each value is a
// shared-memory atomic (a match of equal bins first cost more than the
// atomics it saved on the turbulent field: session 31).
#define R_NONE 0xffffffffu
#define R_HIST_UNROLL 4
#define RHIST(name)                                                                                \
    extern "C" __global__ void name(const int* __restrict__ ints, const unsigned char* __restrict__ cls, \
                                    long long n, unsigned* __restrict__ hist) {                    \
        extern __shared__ unsigned h[];                                                            \
        long long b = blockIdx.y;                                                                  \
        for (int k = threadIdx.x; k < R_NCTX * R_NSYM; k += blockDim.x) h[k] = 0;                  \
        __syncthreads();                                                                           \
        const int* v = ints + b * n;                                                               \
        unsigned lane = threadIdx.x & 31, run_key = R_NONE, run = 0;                               \
        for (long long w = (blockIdx.x * (long long)blockDim.x + (threadIdx.x & ~31u)) * R_HIST_UNROLL; \
             w < n; w += (long long)gridDim.x * blockDim.x * R_HIST_UNROLL) {                      \
            int cur[R_HIST_UNROLL], pv[R_HIST_UNROLL];                                             \
            unsigned cl[R_HIST_UNROLL];                                                            \
            bool ok[R_HIST_UNROLL];                                                                \
            _Pragma("unroll") for (int u = 0; u < R_HIST_UNROLL; u++) {                            \
                long long i = w + 32 * u + lane;                                                   \
                ok[u] = i < n;                                                                     \
                cur[u] = ok[u] ? v[i] : 0;                                                         \
                pv[u] = ok[u] && i % R_RESET != 0 ? v[i - 1] : 0;                                  \
                cl[u] = ok[u] ? cls[i] : 0u;                                                       \
            }                                                                                      \
            unsigned key[R_HIST_UNROLL];                                                           \
            _Pragma("unroll") for (int u = 0; u < R_HIST_UNROLL; u++) {                            \
                unsigned s, nraw, raw;                                                             \
                r_symbol(zigzag(cur[u]), s, nraw, raw);                                            \
                key[u] = ok[u] ? r_context(cl[u], zigzag(pv[u])) * R_NSYM + s : R_NONE;            \
            }                                                                                      \
            unsigned k0 = __shfl_sync(0xffffffffu, key[0], 0);                                     \
            bool same = true;                                                                      \
            _Pragma("unroll") for (int u = 0; u < R_HIST_UNROLL; u++) same = same && key[u] == k0; \
            if (__all_sync(0xffffffffu, same)) {                                                   \
                if (lane == 0 && k0 != R_NONE) {                                                   \
                    if (k0 != run_key) {                                                           \
                        if (run) atomicAdd(&h[run_key], run);                                      \
                        run_key = k0;                                                              \
                        run = 0;                                                                   \
                    }                                                                              \
                    run += 32 * R_HIST_UNROLL;                                                     \
                }                                                                                  \
            } else {                                                                               \
                _Pragma("unroll") for (int u = 0; u < R_HIST_UNROLL; u++)                          \
                    if (key[u] != R_NONE) atomicAdd(&h[key[u]], 1u);                               \
            }                                                                                      \
        }                                                                                          \
        if (run) atomicAdd(&h[run_key], run);                                                      \
        __syncthreads();                                                                           \
        for (int k = threadIdx.x; k < R_NCTX * R_NSYM; k += blockDim.x)                            \
            if (h[k]) atomicAdd(&hist[b * (R_NCTX * R_NSYM) + k], h[k]);                           \
    }

// The serial coders give each chunk a lane of one warp (32 chunks a
// block). Values go through tiles of 32 per chunk in shared memory, one
// row a chunk, loaded and stored in coalesced rows; rows of 33 entries
// (words, or RENC's 16-byte stage words) keep the lanes' walks along
// their own rows free of bank conflicts.
#define R_ROW 33
// RENC's warps (one runs the states, the others stage) and the rows of a
// tile each staging warp takes.
#define R_ENC_WARPS 8
#define R_STAGE_ROWS ((32 + R_ENC_WARPS - 2) / (R_ENC_WARPS - 1))
__device__ __forceinline__ unsigned r_warp_tiles(unsigned len) {
    return __reduce_max_sync(0xffffffffu, (len + 31) / 32);
}

// Words of a brick's cumulative starts as u16 (a context's total is at
// most 2^15).
#define R_CU16_WORDS ((R_NCTX * (R_NSYM + 1) + 1) / 2)

// Loads brick b's cumulative starts (as u16) and scales into shared
// memory, for the encoder (u32 starts made its blocks 77.6 KiB, two an
// SM; at 66.8 KiB three fit) and the decoder (`r_tables16`).
__device__ __forceinline__ void r_tables_u16(unsigned short* cu16, unsigned* sc, const unsigned* cum,
                                             const unsigned* scale, long long b) {
    const unsigned* cm = cum + b * (R_NCTX * (R_NSYM + 1));
    for (int k = threadIdx.x; k < R_NCTX * (R_NSYM + 1); k += blockDim.x) cu16[k] = (unsigned short)cm[k];
    for (int k = threadIdx.x; k < R_NCTX; k += blockDim.x) sc[k] = scale[b * R_NCTX + k];
    __syncthreads();
}

// Per context and symbol, the multiplier of an exact division by the
// symbol's frequency f (Granlund and Montgomery's round-up method for
// 32-bit x: with l = ceil(log2 f) and m = floor(2^(32 + l) / f) + 1,
// x / f = (mulhi(x, m - 2^32) + x) >> l), so the encoder's serial step has
// no division in it.
__device__ __forceinline__ void r_reciprocals(const unsigned short* cu16, unsigned* rc) {
    for (int k = threadIdx.x; k < R_NCTX * R_NSYM; k += blockDim.x) {
        const unsigned short* cu = cu16 + (k / R_NSYM) * (R_NSYM + 1) + k % R_NSYM;
        unsigned f = (unsigned)cu[1] - cu[0];
        unsigned l = 32 - __clz(f - 1);
        rc[k] = f ? (unsigned)((1ull << (32 + l)) / f + 1 - (1ull << 32)) : 0u;
    }
    __syncthreads();
}

// A value's step as RENC's state warp takes it, in four words: x the
// symbol's emission threshold (f << (32 - scale)) - 1, or, for a value of
// more than R_PIECE raw bits, its high piece; y the division multiplier;
// z start | (2^scale - f) << 16; w l | low piece's bits << 4 | high
// piece's bits << 8 | scale << 12 | low piece << 18.
__device__ __forceinline__ uint4 r_stage_word(unsigned start, unsigned f, unsigned scl, unsigned m,
                                              unsigned nraw, unsigned raw) {
    unsigned l = 32 - __clz(f - 1);
    unsigned hn = nraw > R_PIECE ? nraw - R_PIECE : 0u, ln = min(nraw, R_PIECE);
    unsigned thr = (unsigned)(((unsigned long long)f << (32 - scl)) - 1);
    return make_uint4(hn ? raw >> R_PIECE : thr, m, start | (((1u << scl) - f) << 16),
                      l | (ln << 4) | (hn << 8) | (scl << 12) | ((raw & ((1u << ln) - 1)) << 18));
}
// What the staging warps tell the state warp of a tile: some value
// changes the state, some has raw bits, some has a high piece.
#define R_TILE_LIVE 1u
#define R_TILE_RAW 2u
#define R_TILE_HIGH 4u

// Emits the low word of x at o[j] and keeps the rest when x exceeds
// `thr` (its renormalisation). The store takes a copy of x's low half
// (a byte permute the compiler cannot fold into x: RENC 9% faster), so
// the shift of x after it need not wait for the store to read x's
// register.
__device__ __forceinline__ void r_renorm(unsigned& x, unsigned thr, unsigned short* __restrict__ o,
                                         unsigned& j) {
    bool e = x > thr;
    unsigned w16;
    asm("prmt.b32 %0, %1, 0, 0x4410;" : "=r"(w16) : "r"(x));
    if (e) o[j] = (unsigned short)w16;
    j += e;
    x = e ? x >> 16 : x;
}

// An encoder step of `nb` (0 to 16) raw bits (frequency 1 out of 2^nb;
// none leaves x as it is): x >= 2^(32 - nb) emits a word, in emission
// order.
__device__ __forceinline__ void r_put_raw(unsigned& x, unsigned bits, unsigned nb,
                                          unsigned short* __restrict__ o, unsigned& j) {
    r_renorm(x, 0xffffffffu >> nb, o, j);
    x = (x << nb) | bits;
}

// One value through the encoder's state (see r_stage_word): its raw
// pieces, high then low, then its symbol. A piece of no bits and a symbol
// of frequency 1 in 1 leave x as it is, so the steps need no branch: a
// tile without raw bits (RAW false) skips the pieces, and only a tile
// with a high piece somewhere (HIGH) has its branch.
template <bool RAW, bool HIGH>
__device__ __forceinline__ void r_encode_step(unsigned& x, uint4 w, unsigned short* __restrict__ o,
                                              unsigned& j) {
    unsigned thr = w.x;
    if (HIGH) {
        unsigned hn = (w.w >> 8) & 15u;
        if (hn != 0) {
            r_put_raw(x, w.x, hn, o, j);
            unsigned scl = (w.w >> 12) & 15u, cm = w.z >> 16;
            thr = ~((cm << 1) << (31 - scl));
        }
    }
    if (RAW) r_put_raw(x, w.w >> 18, (w.w >> 4) & 15u, o, j);
    r_renorm(x, thr, o, j);
    unsigned q = (unsigned)(((unsigned long long)__umulhi(x, w.y) + x) >> (w.w & 15u));
    x = (x + (w.z & 0xffffu)) + q * (w.z >> 16);
}

// A tile of 32 values of a chunk (row: its stage words), last first.
template <bool RAW, bool HIGH>
__device__ __forceinline__ void r_encode_tile(unsigned& x, const uint4* row, unsigned short* __restrict__ o,
                                              unsigned& j) {
#pragma unroll 8
    for (int k = 31; k >= 0; k--) r_encode_step<RAW, HIGH>(x, row[k], o, j);
}

// Encodes every chunk once: a value emits at most 3 words (two raw pieces
// and its symbol), so chunk c's words fit in the 4 words per value of
// scratch at 4 * (b * n + cstart[c]); sizes[c] gets its word count with
// the final state's two, states[c] the final state. RCOPY then lays the
// chunks out reversed, as the decoder reads them: one pass of the serial
// coder instead of a sizing pass and a writing pass.
// A block codes 32 chunks with 8 warps. One warp runs the states (lane =
// chunk), tiles of 32 values last first; meanwhile the other seven look
// up the next tile's values, contexts, starts, frequencies and division
// multipliers into the other of two stages (one block barrier a tile), as
// the four words of `r_stage_word`. The state warp's step has no branch
// (`r_encode_step`): a step that leaves the state as it is costs the same
// as any other, so a tile's rows past a chunk's end are such steps and
// every tile is 32 steps. The staging warps say what a tile holds
// (R_TILE_*): a tile of values that all leave the states as they are
// (contexts of one symbol of total 1, no raw bits: most of a smooth
// brick's) is passed over, one without raw bits skips the pieces, and
// only one with a high piece has the branch for it. (The step was 89
// instructions with branches, about 460 cycles on the turbulent field;
// session 31.) Two state warps a block of 64 chunks, with tiles of 16
// values to keep the stage's size, coded 57% slower: the six staging
// warps then had half the time for as many values. The state warp is
// the block's warp on the SM's sub-partition numbered after the block's
// place on the SM (%warpid / 8), so that the three blocks an SM do not
// put their serial warps on one scheduler.
#define RENC(name)                                                                                 \
    extern "C" __global__ void name(const int* __restrict__ ints, const unsigned char* __restrict__ cls, \
                                    long long n, const unsigned* cfirst,                           \
                                    const unsigned long long* cstart, const unsigned* clen,        \
                                    const unsigned* cum, const unsigned* scale,                    \
                                    unsigned* sizes, unsigned* states,                             \
                                    unsigned short* __restrict__ scratch) {                        \
        extern __shared__ unsigned sh[];                                                           \
        long long b = blockIdx.y;                                                                  \
        /* A block past its brick's chunks (grids sized by a bound). */                            \
        if (cfirst[b] + blockIdx.x * 32ll >= cfirst[b + 1]) return;                                \
        unsigned short* cu16 = (unsigned short*)sh;                                                \
        unsigned* sc = sh + R_CU16_WORDS;                                                          \
        unsigned* rc = sc + R_NCTX;                                                                \
        long long* rowst = (long long*)(rc + R_NCTX * R_NSYM);                                     \
        unsigned* rowl = (unsigned*)(rowst + 32);                                                  \
        unsigned* tiles = rowl + 32;                                                               \
        uint4* stage0 = (uint4*)(rc + R_NCTX * R_NSYM + 128);                                      \
        unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;                              \
        long long c = cfirst[b] + blockIdx.x * 32ll + lane;                                        \
        bool on = c < cfirst[b + 1];                                                               \
        if (warp == 0) {                                                                           \
            rowst[lane] = on ? (long long)cstart[c] : 0;                                           \
            unsigned L_ = on ? clen[c] : 0u;                                                       \
            rowl[lane] = L_;                                                                       \
            unsigned tl_ = r_warp_tiles(L_);                                                       \
            if (lane == 0) {                                                                       \
                unsigned wid;                                                                      \
                asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));                                 \
                tiles[0] = tl_;                                                                    \
                tiles[17] = ((wid >> 3) - wid) & 3u;                                               \
            }                                                                                      \
        }                                                                                          \
        r_tables_u16(cu16, sc, cum, scale, b);                                                     \
        r_reciprocals(cu16, rc);                                                                   \
        int T = (int)tiles[0];                                                                     \
        unsigned sw = tiles[17];                                                                   \
        const int* v = ints + b * n;                                                               \
        /* The lane's base in registers (the compiler otherwise rebuilt it */                      \
        /* from the kernel's parameter at every store).                  */                      \
        unsigned long long ob = (unsigned long long)(scratch + 4 * (b * n + rowst[lane]));         \
        asm volatile("" : "+l"(ob));                                                               \
        unsigned short* o = (unsigned short*)ob;                                                   \
        unsigned x = R_L, j = 0;                                                                   \
        for (int step = 0; step <= T; step++) {                                                    \
            if (warp != sw) {                                                                      \
                /* Staging warp wr stages rows wr, wr + 7, ... of the tile */                      \
                /* (lane = value): every row's loads are issued before any */                      \
                /* is used.                                                */                      \
                int tp = T - 1 - step;                                                             \
                uint4* sv = stage0 + (step & 1) * 32 * R_ROW;                                      \
                unsigned wr = (warp + 7u - sw) & 7u, i = (unsigned)tp * 32 + lane;                 \
                int cur[R_STAGE_ROWS], pv[R_STAGE_ROWS];                                           \
                unsigned cl[R_STAGE_ROWS];                                                         \
                bool ok[R_STAGE_ROWS], first[R_STAGE_ROWS];                                        \
                _Pragma("unroll") for (int u = 0; u < R_STAGE_ROWS; u++) {                         \
                    unsigned r = wr + (R_ENC_WARPS - 1) * u;                                       \
                    ok[u] = tp >= 0 && r < 32 && i < rowl[min(r, 31u)];                            \
                    long long sr = ok[u] ? rowst[r] : 0;                                           \
                    first[u] = i == 0 || ((unsigned)(sr + i) & (R_RESET - 1)) == 0;                \
                    cur[u] = ok[u] ? v[sr + i] : 0;                                                \
                    pv[u] = ok[u] && !first[u] ? v[sr + i - 1] : 0;                                \
                    cl[u] = ok[u] ? cls[sr + i] : 0u;                                              \
                }                                                                                  \
                unsigned busy = 0;                                                                 \
                _Pragma("unroll") for (int u = 0; u < R_STAGE_ROWS; u++) {                         \
                    unsigned r = wr + (R_ENC_WARPS - 1) * u;                                       \
                    if (r < 32) {                                                                  \
                        /* Past a chunk's end: a step that changes nothing. */                     \
                        uint4 wd = make_uint4(0xffffffffu, 1u, 0u, 0u);                            \
                        unsigned kind = 0;                                                         \
                        if (ok[u]) {                                                               \
                            unsigned cz = zigzag(cur[u]), prev = first[u] ? 0u : zigzag(pv[u]);    \
                            unsigned ctx = r_context(cl[u], prev);                                 \
                            unsigned s, nraw, raw;                                                 \
                            r_symbol(cz, s, nraw, raw);                                            \
                            const unsigned short* cu = cu16 + ctx * (R_NSYM + 1);                  \
                            unsigned start = cu[s], f = cu[s + 1] - start;                         \
                            wd = r_stage_word(start, f, sc[ctx], rc[ctx * R_NSYM + s], nraw, raw); \
                            kind = (sc[ctx] != 0 || nraw != 0 ? R_TILE_LIVE : 0u) |                \
                                   (nraw != 0 ? R_TILE_RAW : 0u) | (nraw > R_PIECE ? R_TILE_HIGH : 0u); \
                        }                                                                          \
                        sv[r * R_ROW + lane] = wd;                                                 \
                        busy |= __reduce_or_sync(0xffffffffu, kind);                               \
                    }                                                                              \
                }                                                                                  \
                /* The tile's kind (R_TILE_*): a tile of values that all */                       \
                /* leave the state as it is is passed over.               */                       \
                if (lane == 0) tiles[1 + 8 * (step & 1) + wr] = busy;                              \
            } else if (step > 0) {                                                                 \
                const uint4* row = stage0 + ((step - 1) & 1) * 32 * R_ROW + lane * R_ROW;          \
                const unsigned* bz = tiles + 1 + 8 * ((step - 1) & 1);                             \
                unsigned busy = 0;                                                                 \
                _Pragma("unroll") for (int w = 0; w < R_ENC_WARPS - 1; w++) busy |= bz[w];       \
                if (busy & R_TILE_HIGH)                                                            \
                    r_encode_tile<true, true>(x, row, o, j);                                       \
                else if (busy & R_TILE_RAW)                                                        \
                    r_encode_tile<true, false>(x, row, o, j);                                      \
                else if (busy)                                                                     \
                    r_encode_tile<false, false>(x, row, o, j);                                     \
            }                                                                                      \
            __syncthreads();                                                                       \
        }                                                                                          \
        if (warp == sw && on) {                                                                    \
            sizes[c] = j + 2;                                                                      \
            states[c] = x;                                                                         \
        }                                                                                          \
    }

// Chunk c (block x; block y adds 65535 * y) at byte offset offs[c] of
// out: the final state (high, low) then the emitted words last first.
#define RCOPY(name)                                                                                \
    extern "C" __global__ void name(const unsigned short* scratch, const unsigned long long* spos, \
                                    const unsigned* sizes, const unsigned* states,                 \
                                    const unsigned long long* offs, long long nch,                 \
                                    unsigned char* out) {                                          \
        long long c = blockIdx.x + 65535ll * blockIdx.y;                                           \
        if (c >= nch) return;                                                                      \
        unsigned short* o = (unsigned short*)(out + offs[c]);                                      \
        const unsigned short* s = scratch + spos[c];                                               \
        unsigned j = sizes[c] - 2;                                                                 \
        if (threadIdx.x == 0) {                                                                    \
            o[0] = (unsigned short)(states[c] >> 16);                                              \
            o[1] = (unsigned short)states[c];                                                      \
        }                                                                                          \
        for (unsigned k = threadIdx.x; k < j; k += blockDim.x) o[2 + k] = s[j - 1 - k];           \
    }

// ---- RPLAN, RPIECES, RWORDS: multires::codec::rans::plan on the device ----
// A batch's rANS plan (tables, chunk length, split, table words) made
// where its histogram is, so RENC starts without a round trip through the
// host (which took 0.9-1.5 ms of every batch's chain: GPU_NOTES.md,
// sessions 47-49). The bytes must equal the host's: the integer steps
// are exact anywhere, and the floating-point ones run in `plan`'s order
// (this file is compiled without FMA contraction), the bit estimate
// summed by one thread in context and symbol order, log2 from the host's
// table. Per brick, `meta` holds R_META words: chunk log, split chunks,
// split log, pieces, table words, then (RPIECES) the brick's first piece
// and first word.
#define R_META 8
#define R_PIECE_MIN_LOG 11u
#define R_CHUNK_BITS 8192.0
#define R_PROB_BITS 15u
// plan_split's first chunks that may be split (u8::MAX in the host's).
#define R_SPLIT_MOST 255

__device__ __forceinline__ long long r_nchunks(long long n, unsigned lg) { return (n + (1ll << lg) - 1) >> lg; }

// rans::piece_count.
__device__ long long r_piece_count(long long n, unsigned lg, unsigned sch, unsigned slog) {
    long long len = 1ll << lg, nc = r_nchunks(n, lg), cnt = 0;
    for (long long j = 0; j < nc; j++) {
        long long a = j * len, z = min(a + len, n);
        long long step = j < (long long)sch ? (len >> slog) : len;
        cnt += (z - a + step - 1) / step;
    }
    return cnt;
}

// The sum of st[lo..hi) (clipped to L), in order, as the host's iterator sum.
__device__ double r_sum(const double* st, long long L, long long lo, long long hi) {
    lo = min(lo, L);
    hi = min(hi, L);
    double s = 0.0;
    for (long long i = lo; i < hi; i++) s = s + st[i];
    return s;
}

// rans::longest_chain.
__device__ double r_longest_chain(const double* st, long long L, long long n, unsigned lg, unsigned sch,
                                  unsigned slog) {
    long long len = 1ll << lg, nc = r_nchunks(n, lg);
    double m = 0.0;
    for (long long j = 0; j < nc; j++) {
        long long a = j * len, z = min(a + len, n);
        long long step = j < (long long)sch ? (len >> slog) : len;
        for (long long p = a; p < z; p += step) {
            long long pl = min(step, z - p);
            m = fmax(m, r_sum(st, L, p / R_RESET, (p + pl + R_RESET - 1) / R_RESET));
        }
    }
    return m;
}

// rans::plan_split: the split as (chunks, log).
__device__ void r_plan_split(const double* est, long long L, long long n, unsigned chunk_log,
                             long long most_pieces, double dense, unsigned& sch, unsigned& slog) {
    sch = 0;
    slog = 0;
    long long per = 1ll << (chunk_log - R_PIECE_MIN_LOG);
    long long nc = r_nchunks(n, chunk_log);
    // after[j]: the longest chunk from j on, for j up to K (the rest's
    // longest at K).
    long long K = min(nc, (long long)(R_SPLIT_MOST + 1));
    double after[R_SPLIT_MOST + 2];
    double tail = 0.0;
    for (long long j = nc - 1; j >= K; j--) tail = fmax(tail, r_sum(est, L, j * per, j * per + per));
    after[K] = tail;
    for (long long j = K - 1; j >= 0; j--) after[j] = fmax(after[j + 1], r_sum(est, L, j * per, j * per + per));
    double whole = after[0];
    if (whole <= dense) return;
    double best = whole;
    long long best_extra = 0;
    unsigned bch = 0, blog = 0;
    for (unsigned lg = 1; lg <= chunk_log - R_PIECE_MIN_LOG; lg++) {
        long long step = per >> lg;
        double head = 0.0;
        long long mm = min(nc, (long long)R_SPLIT_MOST);
        for (long long m = 1; m <= mm; m++) {
            long long extra = r_piece_count(n, chunk_log, (unsigned)m, lg) - nc;
            if (extra > most_pieces) break;
            long long a = (m - 1) * per;
            for (long long p = 0; p < (1ll << lg); p++)
                head = fmax(head, r_sum(est, L, a + p * step, a + p * step + step));
            double chain = fmax(fmax(head, after[m]), dense);
            if (chain < best || (chain == best && extra < best_extra)) {
                best = chain;
                best_extra = extra;
                bch = (unsigned)m;
                blog = lg;
            }
        }
    }
    if (best > 0.75 * whole) return;
    sch = bch;
    slog = blog;
}

// Bits of the exp-Golomb code of v.
__device__ __forceinline__ unsigned r_golomb_bits(unsigned v) { return 2 * (32 - __clz(v + 1)) - 1; }

// The exp-Golomb code of v at bit `pos` of `w` (zeroed; codes of other
// threads may share its words).
__device__ __forceinline__ void r_golomb_put(unsigned* w, unsigned long long& pos, unsigned v) {
    unsigned x = v + 1, b = 32 - __clz(x);
    pos += b - 1;
    unsigned bits = __brev(x) >> (32 - b);
    unsigned off = (unsigned)(pos & 31);
    atomicOr(&w[pos >> 5], bits << off);
    if (off + b > 32) atomicOr(&w[(pos >> 5) + 1], bits >> (32 - off));
    pos += b;
}

// A context's table words (bits written from `pos` when `w` is given,
// else only counted): rans::plan's codes for context row h, frequencies
// f, scale sc.
__device__ unsigned long long r_context_words(const unsigned* h, const unsigned* f, unsigned sc, unsigned* w,
                                              unsigned long long pos) {
    unsigned long long at = pos;
    unsigned present = 0, first = 0, big = 0;
    for (unsigned s = 0; s < R_NSYM; s++)
        if (h[s]) {
            if (present == 0) first = s, big = s;
            if (h[s] > h[big]) big = s;
            present++;
        }
#define R_PUT(v) (w ? r_golomb_put(w, at, (v)) : (void)(at += r_golomb_bits(v)))
    R_PUT(present);
    if (present == 0) return at;
    if (present == 1) {
        R_PUT(first);
        return at;
    }
    R_PUT(sc - 1);
    unsigned last = 0, i = 0, rank = 0;
    for (unsigned s = 0; s < R_NSYM; s++)
        if (h[s]) {
            R_PUT(s - (i == 0 ? 0 : last + 1));
            if (s == big) rank = i;
            last = s;
            i++;
        }
    R_PUT(rank);
    for (unsigned s = 0; s < R_NSYM; s++)
        if (h[s] && s != big) R_PUT(f[s] - 1);
#undef R_PUT
    return at;
}

// A block of 32 threads a brick (y): thread c plans context c (its
// frequencies, cumulative starts and scale, its terms of the bit
// estimate, its table bits), then thread 0 the brick's chunk length and
// split, as rans::plan. `blocks`: the brick shape's class_blocks (nblk of
// them); `lg`: log2 of 0..2^15 as the host has it; `scr`: scratch of
// R_NCTX * R_NSYM doubles and u32 a brick, and nblk doubles. `most` and
// `floor` as plan clamps them; `dense`, `most_pieces`, `long_chain` its
// knobs; `wide` WIDE_SPLIT_PIECES.
#define RPLAN(name)                                                                                \
    extern "C" __global__ void name(const unsigned* hist, const unsigned* blocks, long long nblk,    \
                                    long long n, const double* lg, unsigned most, unsigned floor_, \
                                    double dense, long long most_pieces, double long_chain,        \
                                    long long wide, double* scr, unsigned* cum, unsigned* scale,   \
                                    unsigned* meta) {                                              \
        long long b = blockIdx.y;                                                                  \
        unsigned c = threadIdx.x;                                                                  \
        const unsigned* hb = hist + b * (R_NCTX * R_NSYM);                                         \
        double* terms = scr + b * (R_NCTX * R_NSYM * 2 + nblk);                                    \
        unsigned* freq = (unsigned*)(terms + R_NCTX * R_NSYM);                                     \
        double* steps = terms + R_NCTX * R_NSYM * 2;                                               \
        __shared__ unsigned long long bits[R_NCTX];                                                \
        __shared__ unsigned long long tot[R_NCTX], coded[R_NCTX];                                  \
        if (c < R_NCTX) {                                                                          \
            const unsigned* h = hb + c * R_NSYM;                                                   \
            unsigned* f = freq + c * R_NSYM;                                                       \
            double* t = terms + c * R_NSYM;                                                        \
            unsigned long long total = 0;                                                          \
            unsigned present = 0, big = 0;                                                         \
            for (unsigned s = 0; s < R_NSYM; s++) {                                                \
                total += h[s];                                                                     \
                if (h[s]) {                                                                        \
                    if (present == 0 || h[s] > h[big]) big = s;                                    \
                    present++;                                                                     \
                }                                                                                  \
                f[s] = 0;                                                                          \
                t[s] = 0.0;                                                                        \
            }                                                                                      \
            unsigned sc = 0;                                                                       \
            if (present == 1) f[big] = 1;                                                          \
            if (present > 1) {                                                                     \
                sc = min(max(64u - (unsigned)__clzll((long long)(total - 1)), 1u), R_PROB_BITS);   \
                unsigned rest = 0;                                                                 \
                for (unsigned s = 0; s < R_NSYM; s++)                                              \
                    if (h[s]) {                                                                    \
                        unsigned long long q = ((unsigned long long)h[s] << sc) / total;           \
                        f[s] = (unsigned)(q > 1 ? q : 1);                                          \
                        if (s != big) rest += f[s];                                                \
                    }                                                                              \
                f[big] = (1u << sc) - rest;                                                        \
                for (unsigned s = 0; s < R_NSYM; s++)                                              \
                    if (h[s])                                                                      \
                        t[s] = (double)h[s] * (((double)sc - lg[f[s]]) + (double)r_raw_bits(s));   \
            }                                                                                      \
            unsigned* cm = cum + b * (R_NCTX * (R_NSYM + 1)) + c * (R_NSYM + 1);                   \
            unsigned acc = 0;                                                                      \
            cm[0] = 0;                                                                             \
            for (unsigned s = 0; s < R_NSYM; s++) {                                                \
                acc += f[s];                                                                       \
                cm[s + 1] = acc;                                                                   \
            }                                                                                      \
            scale[b * R_NCTX + c] = sc;                                                            \
            bits[c] = r_context_words(h, f, sc, 0, 0);                                             \
            /* block_steps' totals: all values, and those a lone direct */                        \
            /* symbol does not hold.                                   */                        \
            tot[c] = total;                                                                        \
            coded[c] = present == 1 && big < R_DIRECT ? 0ull : total;                              \
        }                                                                                          \
        __syncthreads();                                                                           \
        __shared__ double share[8];                                                                \
        if (c < 8) {                                                                               \
            unsigned long long all = 0, cd = 0;                                                    \
            for (int p = 0; p < 4; p++) all += tot[4 * c + p], cd += coded[4 * c + p];             \
            share[c] = all > 0 ? (double)cd / (double)all : 0.0;                                   \
        }                                                                                          \
        __syncthreads();                                                                           \
        for (long long k = c; k < nblk; k += blockDim.x) {                                         \
            double s = 0.0;                                                                        \
            for (int l = 0; l < 8; l++) s = s + (double)blocks[k * 8 + l] * share[l];             \
            steps[k] = s;                                                                          \
        }                                                                                          \
        __syncthreads();                                                                           \
        if (c != 0) return;                                                                        \
        double est = 0.0;                                                                          \
        for (int k = 0; k < R_NCTX * R_NSYM; k++) est = est + terms[k];                            \
        unsigned chunk_log = floor_;                                                               \
        while (chunk_log < most && (1ll << chunk_log) < n &&                                       \
               (double)(1ll << chunk_log) * est < R_CHUNK_BITS * (double)n)                        \
            chunk_log++;                                                                           \
        unsigned uch, ulog;                                                                        \
        r_plan_split(steps, nblk, n, chunk_log, most_pieces, dense, uch, ulog);                    \
        unsigned rch = uch, rlog = ulog, rl = chunk_log;                                           \
        if (r_longest_chain(steps, nblk, n, chunk_log, uch, ulog) > long_chain) {                  \
            /* rans::shorter_chains: the first of the fewest pieces, */                           \
            /* then the longest chunks.                              */                           \
            long long most_n = r_piece_count(n, chunk_log, uch, ulog) + wide;                      \
            long long bc = -1;                                                                     \
            /* k < 0: the wide split; then shorter chunks from floor. */                           \
            for (int k = -1; k < (int)chunk_log - (int)floor_; k++) {                              \
                unsigned l = k < 0 ? chunk_log : floor_ + (unsigned)k, sch, slg;                   \
                r_plan_split(steps, nblk, n, l, k < 0 ? max(most_pieces, wide) : most_pieces,      \
                             dense, sch, slg);                                                     \
                if (r_longest_chain(steps, nblk, n, l, sch, slg) > long_chain) continue;           \
                long long cnt = r_piece_count(n, l, sch, slg);                                     \
                if (cnt > most_n) continue;                                                        \
                if (bc < 0 || cnt < bc || (cnt == bc && l > rl)) {                                 \
                    bc = cnt;                                                                      \
                    rl = l;                                                                        \
                    rch = sch;                                                                     \
                    rlog = slg;                                                                    \
                }                                                                                  \
            }                                                                                      \
            if (bc < 0) rl = chunk_log, rch = uch, rlog = ulog;                                    \
        }                                                                                          \
        unsigned long long wbits = 0;                                                              \
        for (int k = 0; k < R_NCTX; k++) wbits += bits[k];                                         \
        unsigned* mt = meta + b * R_META;                                                          \
        mt[0] = rl;                                                                                \
        mt[1] = rch;                                                                               \
        mt[2] = rlog;                                                                              \
        mt[3] = (unsigned)r_piece_count(n, rl, rch, rlog);                                         \
        mt[4] = (unsigned)((wbits + 31) / 32);                                                     \
    }

// Per brick (block y, one thread): its first piece and first table word
// (the earlier bricks' counts summed), its pieces' starts and lengths as
// rans::pieces gives them, and past the last brick the totals.
#define RPIECES(name)                                                                              \
    extern "C" __global__ void name(unsigned* meta, long long nbk, long long n, unsigned* cfirst,  \
                                    unsigned long long* cstart, unsigned* clen) {                  \
        long long b = blockIdx.y;                                                                  \
        if (threadIdx.x != 0) return;                                                              \
        unsigned cf = 0, wf = 0;                                                                   \
        for (long long k = 0; k < b; k++) cf += meta[k * R_META + 3], wf += meta[k * R_META + 4];  \
        unsigned* mt = meta + b * R_META;                                                          \
        mt[5] = cf;                                                                                \
        mt[6] = wf;                                                                                \
        cfirst[b] = cf;                                                                            \
        if (b == nbk - 1) cfirst[nbk] = cf + mt[3];                                                \
        unsigned lg = mt[0], sch = mt[1], slog = mt[2];                                            \
        long long len = 1ll << lg, nc = r_nchunks(n, lg);                                          \
        unsigned k = cf;                                                                           \
        for (long long j = 0; j < nc; j++) {                                                       \
            long long a = j * len, z = min(a + len, n);                                            \
            long long step = j < (long long)sch ? (len >> slog) : len;                             \
            for (long long p = a; p < z; p += step, k++) {                                         \
                cstart[k] = (unsigned long long)p;                                                 \
                clen[k] = (unsigned)min(step, z - p);                                              \
            }                                                                                      \
        }                                                                                          \
    }

// The table words of every brick (block y; thread c writes context c's
// codes after the earlier contexts' bits), one after another from each
// brick's first word (RPIECES) in `words` (zeroed).
#define RWORDS(name)                                                                               \
    extern "C" __global__ void name(const unsigned* hist, const double* scr, long long nblk,        \
                                    const unsigned* scale, const unsigned* meta, unsigned* words) { \
        long long b = blockIdx.y;                                                                  \
        unsigned c = threadIdx.x;                                                                  \
        const unsigned* hb = hist + b * (R_NCTX * R_NSYM);                                         \
        const unsigned* freq = (const unsigned*)(scr + b * (R_NCTX * R_NSYM * 2 + nblk) + R_NCTX * R_NSYM); \
        __shared__ unsigned long long bits[R_NCTX];                                                \
        if (c < R_NCTX)                                                                            \
            bits[c] = r_context_words(hb + c * R_NSYM, freq + c * R_NSYM, scale[b * R_NCTX + c], 0, 0); \
        __syncthreads();                                                                           \
        if (c >= R_NCTX) return;                                                                   \
        unsigned long long pos = 0;                                                                \
        for (unsigned k = 0; k < c; k++) pos += bits[k];                                           \
        r_context_words(hb + c * R_NSYM, freq + c * R_NSYM, scale[b * R_NCTX + c],                 \
                        words + meta[b * R_META + 6], pos);                                        \
    }

// Per context, the first symbol of each of R_BUCKETS equal slices of its
// slots: the decoder starts its search there instead of bisecting 168
// symbols, and rarely steps more than once.
#define R_BUCKETS 256
#define R_BUCKET_LOG 8
__device__ __forceinline__ void r_buckets(const unsigned short* cu16, const unsigned* sc, unsigned char* bk) {
    for (int ctx = threadIdx.x; ctx < R_NCTX; ctx += blockDim.x) {
        const unsigned short* cu = cu16 + ctx * (R_NSYM + 1);
        unsigned s_ = sc[ctx];
        int sym = 0;
        for (int k = 0; k < R_BUCKETS; k++) {
            unsigned p = s_ <= 15 ? (((unsigned)k << s_) + R_BUCKETS - 1) / R_BUCKETS : 0u;
            while (sym < R_NSYM - 1 && cu[sym + 1] <= p) sym++;
            bk[ctx * R_BUCKETS + k] = (unsigned char)sym;
        }
    }
    __syncthreads();
}

// Per context, packed for one shared-memory read in the decoder's serial
// step: 0x80000000 | its symbol when it holds one symbol below R_DIRECT
// (decoding it reads nothing and leaves the state as it is), R_UNUSABLE
// when its table cannot be decoded from (scale above 15, or a total that
// is not 2^scale), else its scale | its first symbol's frequency << 4 |
// that symbol << 20 (the symbol of every slot below that frequency).
#define R_UNUSABLE 0x40000000u
__device__ __forceinline__ void r_context_info(const unsigned* cm, const unsigned* sc, unsigned* ci) {
    for (int ctx = threadIdx.x; ctx < R_NCTX; ctx += blockDim.x) {
        const unsigned* cu = cm + ctx * (R_NSYM + 1);
        unsigned s_ = sc[ctx], info = s_;
        if (s_ > 15 || cu[R_NSYM] != (1u << s_)) {
            info = R_UNUSABLE;
        } else {
            unsigned s0 = 0;
            while (s0 < R_NSYM - 1 && cu[s0 + 1] == 0) s0++;
            if (s_ == 0) {
                if (s0 < R_DIRECT) info = 0x80000000u | s0;
            } else {
                info |= cu[s0 + 1] << 4 | s0 << 20;
            }
        }
        ci[ctx] = info;
    }
}

// RDEC's copy of brick b's tables: scales, the contexts' packed infos,
// the cumulative starts as u16 (a usable table's total is at most 2^15,
// and a context whose total is not is marked unusable from the u32
// starts), then the buckets. Half the bytes of u32 starts: a block holds
// every chunk of a smooth 129^3 brick (33) and four such blocks fit an SM.
__device__ __forceinline__ void r_tables16(unsigned* sh, const unsigned* cum, const unsigned* scale, long long b) {
    const unsigned* cm = cum + b * (R_NCTX * (R_NSYM + 1));
    unsigned *sc = sh, *ci = sh + R_NCTX;
    unsigned short* cu16 = (unsigned short*)(sh + 2 * R_NCTX);
    r_tables_u16(cu16, sc, cum, scale, b);
    r_context_info(cm, sc, ci);
    r_buckets(cu16, sc, (unsigned char*)(sh + 2 * R_NCTX + R_CU16_WORDS));
}

// A lane's window on its chunk's words: 13 aligned 16-byte loads from the
// 16-byte boundary at or below word p, into its row of shared memory;
// returns where word p is in the row. A value reads at most 3 words (its
// symbol and two raw pieces, one each at most), so 104 words cover a tile
// of 32 values from any alignment. The warp loads every lane's window at
// once at the start of a tile: a word read lane by lane when the state
// asks for it stalls the whole warp for a memory latency nearly every
// step on a dense stream.
#define R_WIN 53
__device__ __forceinline__ unsigned r_window(const unsigned short* d, unsigned p, unsigned* row) {
    unsigned long long a = (unsigned long long)(d + p);
    const uint4* q = (const uint4*)(a & ~15ull);
    uint4 w[13];
    _Pragma("unroll") for (int k = 0; k < 13; k++) w[k] = q[k];
    _Pragma("unroll") for (int k = 0; k < 13; k++) {
        row[4 * k] = w[k].x;
        row[4 * k + 1] = w[k].y;
        row[4 * k + 2] = w[k].z;
        row[4 * k + 3] = w[k].w;
    }
    return (unsigned)(a & 15ull) >> 1;
}

// Decodes chunk c from its dlen[c] u16 words at byte offset doff[c] of
// data into ints (zigzag undone); a fault sets err[brick]. Block row b
// decodes brick b's chunks cfirst[b] .. cfirst[b + 1], a lane each; level
// classes come in, words come in and values go out through each warp's
// tiles. `data` has 256 readable bytes past its last stream (the windows).
// The warps of a block (blockDim.x / 32) share the brick's tables, so
// more chains fit on an SM than with one warp (and one copy of the
// tables) a block.
#define RDEC(name)                                                                                 \
    extern "C" __global__ void name(const unsigned char* __restrict__ data,                        \
                                    const unsigned long long* doff, const unsigned* dlen,          \
                                    const unsigned char* __restrict__ cls,                         \
                                    const unsigned char* __restrict__ tcls, long long n,           \
                                    const unsigned* cfirst, const unsigned long long* cstart,      \
                                    const unsigned* clen, const unsigned* cum,                     \
                                    const unsigned* scale, const unsigned* rmask,                  \
                                    int* __restrict__ ints, unsigned* err) {                       \
        extern __shared__ unsigned sh[];                                                           \
        long long b = blockIdx.y;                                                                  \
        r_tables16(sh, cum, scale, b);                                                             \
        /* The context's restart less one: 2^11 - 1, or 2^12 - 1 in the */                          \
        /* streams of versions 3 to 6 (rans::Header::reset).            */                          \
        const unsigned rm = rmask[b];                                                              \
        const unsigned* ci = sh + R_NCTX;                                                          \
        const unsigned short* cu16 = (const unsigned short*)(sh + 2 * R_NCTX);                     \
        const unsigned char* bk = (const unsigned char*)(sh + 2 * R_NCTX + R_CU16_WORDS);          \
        unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;                                 \
        unsigned* tv = sh + 2 * R_NCTX + R_CU16_WORDS + R_NCTX * R_BUCKETS / 4 +                   \
                       warp * (2 * 32 * R_ROW + 32 * R_WIN);                                       \
        unsigned* tl = tv + 32 * R_ROW;                                                            \
        unsigned* win = tl + 32 * R_ROW;                                                           \
        long long c = cfirst[b] + (blockIdx.x * (long long)(blockDim.x >> 5) + warp) * 32 + lane;  \
        bool on = c < cfirst[b + 1];                                                               \
        long long st = on ? (long long)cstart[c] : 0;                                              \
        unsigned L = on ? clen[c] : 0u;                                                            \
        const unsigned short* d = (const unsigned short*)(data + (on ? doff[c] : 0ull));           \
        unsigned dl = on ? dlen[c] : 0u;                                                           \
        int* out = ints + b * n;                                                                   \
        bool bad = on && dl < 2;                                                                   \
        unsigned x = bad || !on ? R_L : ((unsigned)d[0] << 16) | d[1], p = 2, last = 0;            \
        unsigned tiles = r_warp_tiles(L);                                                          \
        unsigned* wrow = win + lane * R_WIN;                                                       \
        /* The next tile's level classes wait in registers, for the */                              \
        /* rows (chunks) `rows` names (warp-uniform: the others' are  */                            \
        /* passed over).                                              */                            \
        unsigned pl[32];                                                                            \
        auto fetch = [&](unsigned tt, unsigned rows) {                                              \
            unsigned i = tt * 32 + lane;                                                            \
            _Pragma("unroll") for (int r = 0; r < 32; r++) {                                        \
                if (rows & (1u << r)) {                                                             \
                    long long rst = __shfl_sync(0xffffffffu, st, r);                                \
                    unsigned rl = __shfl_sync(0xffffffffu, L, r);                                   \
                    pl[r] = i < rl ? cls[rst + i] : 0u;                                             \
                }                                                                                   \
            }                                                                                       \
        };                                                                                          \
        /* Classes whose context after a 0 holds only the symbol 0: */                              \
        /* past a 0, a tile of such classes decodes to zeros, reads    */                           \
        /* nothing and leaves the state as it is. Such a tile of a     */                           \
        /* lane is a zero tile: no classes fetched, no steps, and no    */                          \
        /* stores (`ints` was zeroed); a tile of zero tiles for every   */                          \
        /* lane is passed over.                                        */                           \
        unsigned zc = 0;                                                                            \
        for (unsigned k = 0; tcls && k < 8; k++) zc |= (ci[4 * k] == 0x80000000u) << k;             \
        auto zero_classes = [&](unsigned j0) { return zc && (tcls[(st + j0) >> 5] & ~zc) == 0; };   \
        unsigned clv = 0xffffffffu, n0 = 0, n1 = 0, n2 = 0, n3 = 0;                                 \
        /* Rows whose classes of tile `next` are in pl. */                                          \
        unsigned have = 0, next = 0xffffffffu;                                                      \
        for (unsigned t = 0; t < tiles; t++) {                                                      \
            unsigned i0 = t * 32;                                                                   \
            /* The context restarts at every (rm + 1)-th value: chunks */                           \
            /* start at multiples of it, so only at a tile's first.    */                           \
            if ((i0 & rm) == 0) last = 0;                                                           \
            bool z = i0 >= L || (last == 0 && zero_classes(i0));                                    \
            while (zc && __all_sync(0xffffffffu, z)) {                                              \
                if (++t == tiles) break;                                                            \
                i0 = t * 32;                                                                        \
                if ((i0 & rm) == 0) last = 0;                                                       \
                z = i0 >= L || (last == 0 && zero_classes(i0));                                     \
            }                                                                                       \
            if (t == tiles) break;                                                                  \
            unsigned live = __ballot_sync(0xffffffffu, !z);                                         \
            /* A row the prefetch passed over (its classes were all     */                          \
            /* zero classes, but the value before the tile was not 0).  */                          \
            unsigned miss = live & ~(next == t ? have : 0u);                                        \
            if (miss) fetch(t, miss);                                                               \
            __syncwarp();                                                                           \
            _Pragma("unroll") for (int r = 0; r < 32; r++)                                          \
                if (live & (1u << r)) tl[r * R_ROW + lane] = pl[r];                                 \
            __syncwarp();                                                                           \
            unsigned p0 = p;                                                                        \
            const unsigned short* w =                                                               \
                (const unsigned short*)wrow + (z ? 0u : r_window(d, p, wrow));                      \
            if (t + 1 < tiles) {                                                                    \
                unsigned j0 = i0 + 32;                                                              \
                have = __ballot_sync(0xffffffffu, !(j0 >= L || zero_classes(j0)));                  \
                next = t + 1;                                                                       \
                if (have) fetch(t + 1, have);                                                       \
            }                                                                                       \
            unsigned kn = z ? 0u : min(32u, L - i0);                                                \
            const unsigned* rl = tl + lane * R_ROW;                                                 \
            unsigned* rv = tv + lane * R_ROW;                                                       \
            /* The next value's level class is read ahead, and the    */                            \
            /* infos of the current class's four contexts wait in     */                            \
            /* registers (classes change a few times a chunk), so the */                            \
            /* serial step looks up neither.                          */                            \
            unsigned lvn = rl[0];                                                                   \
            for (unsigned k = 0; k < kn; k++) {                                                     \
                unsigned lvk = min(lvn, 7u);                                                        \
                lvn = rl[k + 1];                                                                    \
                if (lvk != clv) {                                                                   \
                    clv = lvk;                                                                      \
                    n0 = ci[4 * clv];                                                               \
                    n1 = ci[4 * clv + 1];                                                           \
                    n2 = ci[4 * clv + 2];                                                           \
                    n3 = ci[4 * clv + 3];                                                           \
                }                                                                                   \
                unsigned pc = min(last, 3u), ctx = 4 * clv + pc;                                    \
                unsigned info = pc == 0 ? n0 : pc == 1 ? n1 : pc == 2 ? n2 : n3;                    \
                /* The three words this value may read, off the serial path. */                     \
                unsigned q = p - p0, w0 = w[q], w1 = w[q + 1], w2 = w[q + 2];                       \
                if (info & 0x80000000u) {                                                           \
                    rv[k] = last = info & 0xffu;                                                    \
                    continue;                                                                       \
                }                                                                                   \
                if (info == R_UNUSABLE) { bad = true; break; }                                      \
                unsigned s_ = info & 15u, f0 = (info >> 4) & 0xffffu, s0 = info >> 20;              \
                unsigned slot = x & ((1u << s_) - 1);                                               \
                unsigned lo, c0, c1;                                                                \
                if (slot < f0 && s0 < R_DIRECT) {                                                   \
                    /* The context's first symbol (start 0): nearly     */                          \
                    /* every coded step on a smooth field, no look-up.  */                          \
                    lo = s0;                                                                        \
                    c0 = 0;                                                                         \
                    c1 = f0;                                                                        \
                } else {                                                                            \
                    const unsigned short* cu = cu16 + ctx * (R_NSYM + 1);                           \
                    lo = bk[ctx * R_BUCKETS + ((slot << R_BUCKET_LOG) >> s_)];                      \
                    c0 = cu[lo];                                                                    \
                    c1 = cu[lo + 1];                                                                \
                    while (c1 <= slot && lo < R_NSYM - 1) {                                         \
                        lo++;                                                                       \
                        c0 = c1;                                                                    \
                        c1 = cu[lo + 1];                                                            \
                    }                                                                               \
                }                                                                                   \
                unsigned y = (c1 - c0) * (x >> s_) + slot - c0;                                     \
                /* Renormalizations without branches, where the CPU       */                        \
                /* decoder has them: a word in wherever the state fell    */                        \
                /* below R_L (a stream that reads past its end is caught  */                        \
                /* by p != dl below).                                     */                        \
                unsigned r1 = y < R_L;                                                              \
                y = r1 ? (y << 16) | w0 : y;                                                        \
                unsigned val = lo;                                                                  \
                /* Raw bits (values from R_DIRECT up): rare on smooth     */                        \
                /* fields, whose steps then skip this part.               */                        \
                if (lo >= R_DIRECT) {                                                               \
                    unsigned nraw = r_raw_bits(lo), l0 = min(nraw, R_PIECE), l1 = nraw - l0;        \
                    unsigned raw = y & ((1u << l0) - 1);                                            \
                    y >>= l0;                                                                       \
                    unsigned r2 = y < R_L;                                                          \
                    y = r2 ? (y << 16) | (r1 ? w1 : w0) : y;                                        \
                    raw |= (y & ((1u << l1) - 1)) << R_PIECE;                                       \
                    y >>= l1;                                                                       \
                    unsigned r3 = l1 > 0 && y < R_L;                                                \
                    unsigned rr = r1 + r2;                                                          \
                    y = r3 ? (y << 16) | (rr == 0 ? w0 : rr == 1 ? w1 : w2) : y;                    \
                    r1 = rr + r3;                                                                   \
                    val = ((4u | ((lo - R_DIRECT) & 3u)) << nraw) | raw;                            \
                }                                                                                   \
                x = y;                                                                              \
                p += r1;                                                                            \
                rv[k] = val;                                                                        \
                last = val;                                                                         \
            }                                                                                       \
            __syncwarp();                                                                           \
            _Pragma("unroll 8") for (int r = 0; r < 32; r++) {                                      \
                if (live & (1u << r)) {                                                             \
                    long long rst = __shfl_sync(0xffffffffu, st, r);                                \
                    unsigned rl = __shfl_sync(0xffffffffu, L, r);                                   \
                    if (i0 + lane < rl) out[rst + i0 + lane] = unzigzag(tv[r * R_ROW + lane]);      \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        if (on && (bad || x != R_L || p != dl)) err[b] = 1;                                        \
    }

// ---- fields that live on the device (compress_resident, decompress_resident) ----

__device__ __forceinline__ bool r_finite(float v) {
    return (__float_as_uint(v) & 0x7f800000u) != 0x7f800000u;
}

// Per block: the least and greatest finite value and whether any value
// is not finite (1.0f if so), into out[k], out[blocks + k] and
// out[2 blocks + k] (one read-back for all three), over `rows` rows of
// `width` values that start `pitch` values apart (a slab's piece of whole
// planes and some of their rows; one row for a span). Blocks take rows by
// blockIdx.y. Each row from its first 16-byte boundary in float4s: with a
// float a load, a turbulent 1024^3 slab's range ran at 1.8-2.2 of the
// H100's 3.35 TB/s (session 45).
__device__ __forceinline__ void r_range_take(float v, float& a, float& b, unsigned& c) {
    if (r_finite(v)) { a = fminf(a, v); b = fmaxf(b, v); } else c = 1;
}
#define RANGE(name)                                                                                \
    extern "C" __global__ void name(const float* in, long long width, long long rows,              \
                                    long long pitch, float* out) {                                 \
        __shared__ float slo[256], shi[256];                                                       \
        __shared__ unsigned sb[256];                                                               \
        float a = __int_as_float(0x7f800000), b = -a;                                              \
        unsigned c = 0;                                                                            \
        long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;                            \
        long long step = (long long)gridDim.x * blockDim.x;                                        \
        for (long long r = blockIdx.y; r < rows; r += gridDim.y) {                                 \
            const float* row = in + r * pitch;                                                     \
            long long head = (long long)(((16 - ((unsigned long long)row & 15)) & 15) / 4);        \
            if (head > width) head = width;                                                        \
            long long nv = (width - head) / 4;                                                     \
            const float4* v4 = reinterpret_cast<const float4*>(row + head);                        \
            _Pragma("unroll 4") for (long long i = t; i < nv; i += step) {                         \
                float4 v = v4[i];                                                                  \
                r_range_take(v.x, a, b, c);                                                        \
                r_range_take(v.y, a, b, c);                                                        \
                r_range_take(v.z, a, b, c);                                                        \
                r_range_take(v.w, a, b, c);                                                        \
            }                                                                                      \
            long long rest = head + 4 * nv;                                                        \
            if (t < head) r_range_take(row[t], a, b, c);                                           \
            if (t < width - rest) r_range_take(row[rest + t], a, b, c);                            \
        }                                                                                          \
        int k = threadIdx.x;                                                                       \
        slo[k] = a; shi[k] = b; sb[k] = c;                                                         \
        __syncthreads();                                                                           \
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {                                             \
            if (k < s) {                                                                           \
                slo[k] = fminf(slo[k], slo[k + s]);                                                \
                shi[k] = fmaxf(shi[k], shi[k + s]);                                                \
                sb[k] |= sb[k + s];                                                                \
            }                                                                                      \
            __syncthreads();                                                                       \
        }                                                                                          \
        long long blocks = (long long)gridDim.x * gridDim.y;                                       \
        long long o = blockIdx.y * (long long)gridDim.x + blockIdx.x;                              \
        if (k == 0) {                                                                              \
            out[o] = slo[0];                                                                       \
            out[blocks + o] = shi[0];                                                              \
            out[2 * blocks + o] = sb[0] ? 1.0f : 0.0f;                                             \
        }                                                                                          \
    }

// n bytes from src to dst, device or mapped host memory (stage.rs: a
// slot's small copies without the copy engines), 16 at a time when both
// are 16-byte aligned.
#define STAGE(name)                                                                                \
    extern "C" __global__ void name(const unsigned char* src, unsigned char* dst, long long n) {  \
        long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;                            \
        long long k = (long long)gridDim.x * blockDim.x;                                           \
        long long n16 = ((((unsigned long long)src | (unsigned long long)dst) & 15) == 0) ? n / 16 \
                                                                                            : 0;   \
        for (long long i = t; i < n16; i += k)                                                     \
            reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];             \
        for (long long i = 16 * n16 + t; i < n; i += k) dst[i] = src[i];                           \
    }

// ---- Payload checksums (CRC-32 of zlib and crc32fast, on the device) ----

// The host's few bytes of each payload (step, stream header, outlier
// counts): segment k copies len[k] bytes from src + from[k] to out + to[k]
// (a block a segment), before the checksums are taken.
#define HPUT(name)                                                                                 \
    extern "C" __global__ void name(const unsigned char* src, const unsigned long long* from,     \
                                    const unsigned long long* to, const unsigned* len,             \
                                    long long nseg, unsigned char* out) {                          \
        for (long long k = blockIdx.x; k < nseg; k += gridDim.x)                                   \
            for (unsigned i = threadIdx.x; i < len[k]; i += blockDim.x)                             \
                out[to[k] + i] = src[from[k] + i];                                                 \
    }

#define CRC_POLY 0xedb88320u
#define CRC_PIECE 512

// a(x) b(x) modulo the CRC polynomial (bit-reflected, as zlib's multmodp),
// without branches: every bit of a costs the same few dependent steps.
__device__ __forceinline__ unsigned crc_multmodp(unsigned a, unsigned b) {
    unsigned p = 0;
#pragma unroll
    for (int i = 31; i >= 0; i--) {
        p ^= b & (0u - ((a >> i) & 1u));
        b = (b >> 1) ^ (CRC_POLY & (0u - (b & 1u)));
    }
    return p;
}

// The CRC-32 of every piece of each payload (brick b's at out + at[b],
// len[b] bytes, a multiple of 4 from a 4-byte boundary; its pieces
// pfirst[b] .. pfirst[b + 1]): the first piece is the payload's short
// head (len mod CRC_PIECE bytes, or a whole piece), every later piece
// CRC_PIECE bytes, so the fold shifts by one constant. A lane a piece, a
// warp 32 pieces: the warp loads the 32 pieces' next 128 bytes together
// (coalesced) into its rows of shared memory; each lane then runs its
// own row, a word a step through four tables (slicing by 4). Pieces of
// 4 KiB kept one lane 1024 dependent steps: 0.3-0.8 ms of every batch's
// tail, whatever its size (session 48's timeline).
#define CRC_PIECES(name)                                                                           \
    extern "C" __global__ void name(const unsigned char* out, const unsigned long long* at,       \
                                    const unsigned long long* len, const unsigned* pfirst,         \
                                    long long nbk, unsigned* crcp) {                               \
        __shared__ unsigned T[4][256];                                                             \
        __shared__ unsigned rows[8][32 * 33];                                                      \
        for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) {                                 \
            unsigned c = i;                                                                        \
            for (int k = 0; k < 8; k++) c = (c & 1) ? CRC_POLY ^ (c >> 1) : c >> 1;                \
            T[0][i] = c;                                                                           \
        }                                                                                          \
        __syncthreads();                                                                           \
        for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) {                                 \
            unsigned c = T[0][i];                                                                  \
            for (int k = 1; k < 4; k++) {                                                          \
                c = (c >> 8) ^ T[0][c & 0xff];                                                     \
                T[k][i] = c;                                                                       \
            }                                                                                      \
        }                                                                                          \
        __syncthreads();                                                                           \
        unsigned lane = threadIdx.x & 31, wp = threadIdx.x >> 5;                                   \
        unsigned p = blockIdx.x * blockDim.x + threadIdx.x, np = pfirst[nbk];                      \
        unsigned long long a = 0;                                                                  \
        unsigned n = 0;                                                                            \
        if (p < np) {                                                                              \
            /* The piece's brick: the last b with pfirst[b] <= p. */                               \
            long long lo = 0, hi = nbk - 1;                                                        \
            while (lo < hi) {                                                                      \
                long long mid = (lo + hi + 1) / 2;                                                 \
                if (pfirst[mid] <= p) lo = mid; else hi = mid - 1;                                 \
            }                                                                                      \
            unsigned q = p - pfirst[lo], m = pfirst[lo + 1] - pfirst[lo];                          \
            unsigned long long head = len[lo] - (unsigned long long)(m - 1) * CRC_PIECE;           \
            unsigned long long o = q == 0 ? 0 : head + (unsigned long long)(q - 1) * CRC_PIECE;    \
            n = q == 0 ? (unsigned)head : CRC_PIECE;                                               \
            a = (unsigned long long)(out + at[lo] + o);                                            \
        }                                                                                          \
        unsigned* row = rows[wp];                                                                  \
        unsigned c = 0xffffffffu;                                                                  \
        for (unsigned j = 0; j < CRC_PIECE; j += 128) {                                            \
            _Pragma("unroll") for (int r = 0; r < 32; r++) {                                       \
                unsigned long long ar = __shfl_sync(0xffffffffu, a, r);                            \
                unsigned nr = __shfl_sync(0xffffffffu, n, r);                                      \
                unsigned k = j + 4 * lane;                                                         \
                row[r * 33 + lane] = k < nr ? *(const unsigned*)(ar + k) : 0u;                     \
            }                                                                                      \
            __syncwarp();                                                                          \
            for (int k = 0; k < 32; k++) {                                                         \
                if (j + 4 * k < n) {                                                               \
                    c ^= row[lane * 33 + k];                                                       \
                    c = T[3][c & 0xff] ^ T[2][(c >> 8) & 0xff] ^ T[1][(c >> 16) & 0xff] ^          \
                        T[0][c >> 24];                                                             \
                }                                                                                  \
            }                                                                                      \
            __syncwarp();                                                                          \
        }                                                                                          \
        if (p < np) crcp[p] = c ^ 0xffffffffu;                                                     \
    }

// Each payload's CRC-32 from its pieces' (a warp a brick): crc(A B) is
// x^(8 |B|) crc(A) + crc(B) (zlib's crc32_combine), and every piece after
// the first is CRC_PIECE bytes, so appending one is a product by xp =
// x^(8 CRC_PIECE) (the host's crc_x8n), four table lookups here. The
// lanes take runs of k pieces (k a power of two, the last lane the last
// run, so only the first nonempty run may hold the short head), fold them
// in series, and the warp joins the runs in five steps, the right-hand
// run of step s always s k whole pieces (xp^(s k), one squaring a step).
// One thread a brick folding ~300 pieces, each by a carry-less product
// of 32 branches, took 0.4 ms of every batch's tail.
#define CRC_FOLD(name)                                                                             \
    extern "C" __global__ void name(const unsigned* crcp, const unsigned* pfirst, long long nbk,  \
                                    unsigned xp, unsigned* crc) {                                  \
        __shared__ unsigned Z[4][256];                                                             \
        __shared__ unsigned basis[32];                                                             \
        if (threadIdx.x < 32) basis[threadIdx.x] = crc_multmodp(xp, 1u << threadIdx.x);           \
        __syncthreads();                                                                           \
        for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) {                                \
            unsigned j = i >> 8, v = i & 255, z = 0;                                               \
            for (int t = 0; t < 8; t++)                                                            \
                if ((v >> t) & 1u) z ^= basis[8 * j + t];                                          \
            Z[j][v] = z;                                                                           \
        }                                                                                          \
        __syncthreads();                                                                           \
        long long b = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;                     \
        unsigned lane = threadIdx.x & 31;                                                          \
        if (b >= nbk) return;                                                                      \
        unsigned a = pfirst[b];                                                                    \
        long long np = pfirst[b + 1] - a;                                                          \
        unsigned k = 1, op = xp;                                                                   \
        while (32ll * k < np) {                                                                    \
            k <<= 1;                                                                               \
            op = crc_multmodp(op, op);                                                             \
        }                                                                                          \
        long long hi = np - (long long)(31 - lane) * k, lo = hi - k;                               \
        lo = lo < 0 ? 0 : lo;                                                                      \
        unsigned c = 0;                                                                            \
        for (long long p = lo; p < hi; p++)                                                        \
            c = Z[0][c & 0xff] ^ Z[1][(c >> 8) & 0xff] ^ Z[2][(c >> 16) & 0xff] ^ Z[3][c >> 24] ^  \
                crcp[a + p];                                                                       \
        for (unsigned s = 1; s < 32; s <<= 1) {                                                    \
            unsigned r = __shfl_down_sync(0xffffffffu, c, s);                                      \
            c = crc_multmodp(op, c) ^ r;                                                           \
            op = crc_multmodp(op, op);                                                             \
        }                                                                                          \
        if (lane == 0) crc[b] = c;                                                                 \
    }

// The first index (row * pitch + column) of a value that is not finite
// (for the error message), over RANGE's rows.
#define FIRST_BAD(name)                                                                            \
    extern "C" __global__ void name(const float* in, long long width, long long rows,              \
                                    long long pitch, unsigned long long* first) {                  \
        for (long long r = blockIdx.y; r < rows; r += gridDim.y)                                   \
            for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < width;        \
                 i += (long long)gridDim.x * blockDim.x)                                           \
                if (!r_finite(in[r * pitch + i]))                                                  \
                    atomicMin(first, (unsigned long long)(r * pitch + i));                         \
    }

// Where value i of brick b (origin org[3b..3b+3], rows of d2, planes of
// d1 rows) lies in a field of Y x X planes.
__device__ __forceinline__ long long r_field_at(long long i, long long b, const long long* org,
                                                long long Y, long long X, int d1, int d2) {
    unsigned iu = (unsigned)i, e2 = (unsigned)d2, e1 = (unsigned)d1;
    return field_index(b, iu / (e1 * e2), (iu / e2) % e1, iu % e2, org, Y, X);
}

// A block's largest magnitude m (each thread's) into *peak, as its bits
// (non-negative doubles order as integers): one atomic a block, since a
// warp's each contended on the brick's word. w: 32 doubles of shared
// memory; every thread of the block must call it.
__device__ __forceinline__ void r_block_peak(double m, double* w, unsigned long long* peak) {
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < (int)(blockDim.x >> 5); k++) m = fmax(m, w[k]);
        atomicMax(peak, (unsigned long long)__double_as_longlong(m));
    }
}

// Brick b of a batch (extent d0 x d1 x d2) from a float32 field into x, as T
// (float for the interpolation, which reads its input as stored; double
// for the lifting transforms); x null: only the peaks (the interpolation
// then reads the field itself). A warp copies a row at a time, four
// loads in flight a lane before their stores: a thread a value, placed
// by three 32-bit divisions, reached a third of the DRAM bandwidth.
#define GATHER(name, T)                                                                            \
    extern "C" __global__ void name(const float* __restrict__ in, const long long* org,           \
                                    long long Y, long long X, int d0, int d1, int d2,              \
                                    T* __restrict__ x, unsigned long long* peak) {                 \
        __shared__ double w[32];                                                                   \
        long long n = (long long)d0 * d1 * d2, b = blockIdx.y;                                     \
        const float* src = in + field_index(b, 0, 0, 0, org, Y, X);                                \
        T* dst = x ? x + b * n : 0;                                                                \
        unsigned lane = threadIdx.x & 31, wpb = blockDim.x >> 5;                                   \
        unsigned rows = (unsigned)(d0 * d1), e2 = (unsigned)d2, e1 = (unsigned)d1;                 \
        float m = 0.0f;                                                                            \
        for (unsigned r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) { \
            unsigned z = r / e1, yy = r - z * e1;                                                  \
            const float* sr = src + ((long long)z * Y + yy) * X;                                   \
            long long at = (long long)r * e2;                                                      \
            for (unsigned k0 = lane; k0 < e2; k0 += 128) {                                         \
                float v[4];                                                                        \
                _Pragma("unroll") for (int u = 0; u < 4; u++) {                                    \
                    unsigned k = k0 + 32 * u;                                                      \
                    v[u] = k < e2 ? sr[k] : 0.0f;                                                  \
                }                                                                                  \
                _Pragma("unroll") for (int u = 0; u < 4; u++) {                                    \
                    unsigned k = k0 + 32 * u;                                                      \
                    if (k < e2) {                                                                  \
                        if (dst) dst[at + k] = (T)v[u];                                            \
                        m = fmaxf(m, fabsf(v[u]));                                                 \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        /* With peak set, each brick's largest magnitude as BPEAK's (the */                       \
        /* values pass here anyway: no second read of the batch).        */                       \
        if (peak == 0) return;                                                                     \
        r_block_peak((double)m, w, &peak[b]);                                                      \
    }

// The inverse of GATHER: decoded bricks (doubles) rounded to float32 (as
// TO_DTYPE and DType::round) and placed in the field.
#define SCATTER(name)                                                                              \
    extern "C" __global__ void name(const double* y, const long long* org, long long Y,           \
                                    long long X, int d0, int d1, int d2, float* out) {             \
        long long n = (long long)d0 * d1 * d2, b = blockIdx.y;                                     \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                \
             i += (long long)gridDim.x * blockDim.x) {                                             \
            out[r_field_at(i, b, org, Y, X, d1, d2)] = __double2float_rn(y[b * n + i]);            \
        }                                                                                          \
    }

// Outlier corrections on decoded floats, as multires::codec::apply_outliers:
// a value moves by steps times twice the bound (rounded to float), or is
// replaced by its exact value.
#define OUTFIX(name)                                                                               \
    extern "C" __global__ void name(float* y, const unsigned long long* pos, const int* steps,    \
                                    const float* exact, long long count, double e) {               \
        for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < count;            \
             j += (long long)gridDim.x * blockDim.x) {                                             \
            unsigned long long p = pos[j];                                                         \
            int k = steps[j];                                                                      \
            y[p] = k != 0 ? (float)((double)y[p] + (double)k * 2.0 * e) : exact[j];                \
        }                                                                                          \
    }

// Per brick, the largest magnitude (its bits: non-negative doubles order
// as integers), for the interpolation's steps and the lifting transforms'
// on a zero bound.
#define BPEAK(name, T)                                                                             \
    extern "C" __global__ void name(const T* x, long long n, unsigned long long* peak) {          \
        __shared__ double w[32];                                                                   \
        long long b = blockIdx.y;                                                                  \
        double m = 0.0;                                                                            \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                \
             i += (long long)gridDim.x * blockDim.x)                                               \
            m = fmax(m, fabs((double)x[b * n + i]));                                               \
        r_block_peak(m, w, &peak[b]);                                                              \
    }

// Per brick, multires::codec::interp_step of its peak (the same
// operations; this file is compiled without FMA): the interpolation's
// step, computed where the peak is, so no batch waits on the host for it.
#define ISTEP(name)                                                                                \
    extern "C" __global__ void name(const unsigned long long* peak, double e, double ulp,         \
                                    double z, long long n, double* q) {                            \
        long long b = blockIdx.x * (long long)blockDim.x + threadIdx.x;                            \
        if (b >= n) return;                                                                        \
        double p = __longlong_as_double((long long)peak[b]);                                       \
        /* A zero bound: z (ZERO_BOUND_STEP or _F32) times the peak. */                            \
        q[b] = e > 0.0 ? 2.0 * fmax(e - p * ulp, 0.5 * e) : fmax(p * z, 2.2250738585072014e-308);  \
    }
