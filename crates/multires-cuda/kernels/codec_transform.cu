// The error-bounded codec on the device (multires::codec): lifting,
// quantization in Morton order, the encoder's own decode and outlier
// check, and the Rice coder's sizes and bits. Compiled with --fmad=false
// and written operation for operation as the CPU code, so every double is
// the same and the output is byte-identical. A launch covers a batch of
// bricks of one shape (blockIdx.y or .z is the brick). The source is
// codec_transform.cu (this part: lifting and the interpolation),
// codec_rice.cu, codec_rans.cu and codec_checks.cu, compiled as one.

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

