// ---- The fast profile (multires::codec::lorenzo) on the device ----
// A warp codes one block of up to 64 values (lane l holds values l and
// l + 32): quantization to steps of twice the bound checked as the
// decoder reconstructs (float64, FMA contraction off for this program),
// the Lorenzo residuals through the warp's shared row, the bit length a
// warp maximum, and each bit plane one pair of ballots. The bytes equal
// the host coder's. Blocks are numbered brick by brick, `maxb` numbers a
// brick (a full brick's count; an edge brick's extra numbers are idle).

#define LZ_RAW 0xFFu
#define LZ_QMAX 134217728.0
#define LZ_WARPS 8

// A warp's block. Index arithmetic in 32 bits (a field of 2^32 blocks
// would be 256 G values); only the field's index is 64-bit. The 64-bit
// divisions this did first were a large part of each block's cost.
struct LzBlock {
    long long row0;    // the field index of the block's first value
    long long plane;   // values between planes of the field
    unsigned d2;       // values between rows of the field
    unsigned k, j;     // brick, block in the brick
    unsigned nblk;     // the brick's blocks
    int ext[3];        // the block's extent
    int n;             // its values
    bool on;
};

__device__ __forceinline__ LzBlock lz_block(unsigned g, unsigned maxb, const long long* d,
                                            const long long* b) {
    LzBlock B;
    B.k = g / maxb;
    B.j = g - B.k * maxb;
    unsigned du[3] = {(unsigned)d[0], (unsigned)d[1], (unsigned)d[2]};
    unsigned bu[3] = {(unsigned)b[0], (unsigned)b[1], (unsigned)b[2]};
    unsigned G1 = (du[1] + bu[1] - 1) / bu[1], G2 = (du[2] + bu[2] - 1) / bu[2];
    unsigned kk[3] = {B.k / (G1 * G2), B.k / G2 % G1, B.k % G2};
    unsigned bo[3], be[3];
    for (int a = 0; a < 3; a++) {
        bo[a] = kk[a] * bu[a];
        be[a] = min(bu[a], du[a] - bo[a]);
    }
    unsigned E[3];
    if (be[0] > 1) {
        E[0] = 4; E[1] = 4; E[2] = 4;
    } else if (be[1] > 1) {
        E[0] = 1; E[1] = 8; E[2] = 8;
    } else {
        E[0] = 1; E[1] = 1; E[2] = 64;
    }
    unsigned gb[3];
    for (int a = 0; a < 3; a++) gb[a] = (be[a] + E[a] - 1) / E[a];
    B.nblk = gb[0] * gb[1] * gb[2];
    B.on = B.j < B.nblk;
    unsigned jj[3] = {B.j / (gb[1] * gb[2]), B.j / gb[2] % gb[1], B.j % gb[2]};
    B.n = 1;
    unsigned o[3];
    for (int a = 0; a < 3; a++) {
        unsigned jo = B.on ? jj[a] * E[a] : 0;
        o[a] = bo[a] + jo;
        B.ext[a] = B.on ? (int)min(E[a], be[a] - jo) : 1;
        B.n *= B.ext[a];
    }
    B.d2 = (unsigned)d[2];
    B.plane = d[1] * d[2];
    B.row0 = (long long)o[0] * B.plane + (long long)o[1] * d[2] + o[2];
    return B;
}

// Value i's place (z, y, x) in the block: shifts for a whole 4^3 block.
__device__ __forceinline__ void lz_zyx(int i, const int* ext, int& z, int& y, int& x) {
    if (ext[0] == 4 && ext[1] == 4 && ext[2] == 4) {
        z = i >> 4; y = (i >> 2) & 3; x = i & 3;
    } else {
        z = i / (ext[1] * ext[2]); y = i / ext[2] % ext[1]; x = i % ext[2];
    }
}

// The field index of value i of the block.
__device__ __forceinline__ long long lz_index(const LzBlock& B, int i) {
    int z, y, x;
    lz_zyx(i, B.ext, z, y, x);
    return B.row0 + z * B.plane + (long long)y * B.d2 + x;
}

// The residual of value i from the warp's integers q (extent ext): the
// eight-term Lorenzo difference, nothing before the block.
__device__ __forceinline__ int lz_residual(const int* q, int i, const int* ext) {
    int oy = ext[2], oz = ext[1] * ext[2];
    int z, y, x;
    lz_zyx(i, ext, z, y, x);
    bool bx = x > 0, by = y > 0, bz = z > 0;
    int r = q[i];
    if (bx) r -= q[i - 1];
    if (by) r -= q[i - oy];
    if (bz) r -= q[i - oz];
    if (bx && by) r += q[i - 1 - oy];
    if (bx && bz) r += q[i - 1 - oz];
    if (by && bz) r += q[i - oy - oz];
    if (bx && by && bz) r -= q[i - 1 - oy - oz];
    return r;
}

__device__ __forceinline__ unsigned lz_zigzag(int v) {
    return (unsigned)((v << 1) ^ (v >> 31));
}

// A warp's coding of its block: values v (as stored), whether each fits,
// the residuals, the head and the body's length.
struct LzCode {
    float v[2];
    int r[2];
    unsigned corner;
    unsigned head, len, rate, kb;
    double maxe, sse;
};

__device__ __forceinline__ LzCode lz_code(const float* x, const LzBlock& B, double e, int* q) {
    unsigned lane = threadIdx.x & 31;
    double s = 2.0 * e, inv = 1.0 / s;
    LzCode C;
    C.corner = 0;
    bool ok = true;
    C.maxe = 0.0;
    C.sse = 0.0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        int i = lane + 32 * h;
        C.v[h] = 0.0f;
        int qi = 0;
        if (B.on && i < B.n) {
            float xv = x[lz_index(B, i)];
            C.v[h] = xv;
            double xd = (double)xv;
            double qf = round(__dmul_rn(xd, inv));
            bool fit = s > 0.0 && fabs(qf) <= LZ_QMAX;
            double err = fit ? fabs((double)(float)__dmul_rn(qf, s) - xd) : 0.0;
            fit = fit && err <= e;
            ok = ok && fit;
            if (fit) {
                qi = (int)qf;
                C.maxe = fmax(C.maxe, err);
                C.sse += err * err;
            }
        }
        q[i] = qi;
    }
    bool raw = !__all_sync(0xffffffffu, ok);
    __syncwarp();
    unsigned peak = 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        int i = lane + 32 * h;
        C.r[h] = (B.on && i < B.n) ? lz_residual(q, i, B.ext) : 0;
        if (i == 0) {
            C.corner = lz_zigzag(C.r[h]);
            C.r[h] = 0;
        }
        peak = max(peak, (unsigned)abs(C.r[h]));
    }
    C.corner = __shfl_sync(0xffffffffu, C.corner, 0);
    peak = __reduce_max_sync(0xffffffffu, peak);
    unsigned nb = (B.n + 7) / 8;
    C.rate = peak == 0 ? 0 : 32 - __clz(peak);
    C.kb = C.corner == 0 ? 0 : (32 - __clz(C.corner) + 7) / 8;
    if (raw) {
        C.head = LZ_RAW;
        C.len = 4 * B.n;
    } else {
        C.head = (C.kb << 5) | C.rate;
        C.len = C.kb + (C.rate > 0 ? nb * (1 + C.rate) : 0);
    }
    __syncwarp();
    return C;
}

// Each block's head and body length, and per brick the largest error,
// the squared errors and the values stored raw (stats[3 k ..]).
#define LZ_MEASURE(name)                                                                           \
    extern "C" __global__ void name(unsigned long long xa, const long long* dims,                  \
                                    long long maxb, long long nblocks, double e,                   \
                                    unsigned* sizes, unsigned long long* maxe, double* sse,        \
                                    unsigned long long* raw) {                                     \
        __shared__ int qs[LZ_WARPS][64];                                                     \
        const float* x = (const float*)xa;                                                         \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        unsigned w = threadIdx.x >> 5;                                                             \
        for (long long g = (long long)blockIdx.x * LZ_WARPS + w; g < nblocks;                      \
             g += (long long)gridDim.x * LZ_WARPS) {                                               \
            LzBlock B = lz_block((unsigned)g, (unsigned)maxb, d, b);                                                   \
            LzCode C = lz_code(x, B, e, qs[w]);                                                 \
            double m = C.maxe, s2 = C.sse;                                                         \
            for (int o = 16; o > 0; o >>= 1) {                                                     \
                m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));                                  \
                s2 += __shfl_down_sync(0xffffffffu, s2, o);                                        \
            }                                                                                      \
            if ((threadIdx.x & 31) == 0) {                                                         \
                sizes[g] = B.on ? C.len : 0;                                                       \
                if (B.on) {                                                                        \
                    if (C.head == LZ_RAW) atomicAdd(&raw[B.k], (unsigned long long)B.n);           \
                    else {                                                                         \
                        atomicMax(&maxe[B.k], (unsigned long long)__double_as_longlong(m));        \
                        atomicAdd(&sse[B.k], s2);                                                  \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

// Brick k's exclusive scan of its maxb sizes (a block of 1024 threads a
// brick) into offs, and its total into tot[k].
#define LZ_SCAN(name)                                                                              \
    extern "C" __global__ void name(const unsigned* sizes, long long maxb, unsigned* offs,         \
                                    unsigned long long* tot) {                                     \
        __shared__ unsigned long long part[1024];                                                  \
        long long k = blockIdx.x;                                                                  \
        const unsigned* s = sizes + k * maxb;                                                      \
        unsigned* o = offs + k * maxb;                                                             \
        long long per = (maxb + 1023) / 1024, a = threadIdx.x * per, z = min(a + per, maxb);       \
        unsigned long long sum = 0;                                                                \
        for (long long i = a; i < z; i++) sum += s[i];                                             \
        part[threadIdx.x] = sum;                                                                   \
        __syncthreads();                                                                           \
        for (unsigned st = 1; st < 1024; st <<= 1) {                                               \
            unsigned long long add = threadIdx.x >= st ? part[threadIdx.x - st] : 0;               \
            __syncthreads();                                                                       \
            part[threadIdx.x] += add;                                                              \
            __syncthreads();                                                                       \
        }                                                                                          \
        unsigned long long run = part[threadIdx.x] - sum;                                          \
        for (long long i = a; i < z; i++) {                                                        \
            o[i] = (unsigned)run;                                                                  \
            run += s[i];                                                                           \
        }                                                                                          \
        if (threadIdx.x == 1023) tot[k] = part[1023];                                              \
    }

// Writes every block: its head at base[k] + j, its body at base[k] +
// nblk + offs (out zeroed before, so the padding stays zero).
#define LZ_PACK(name)                                                                              \
    extern "C" __global__ void name(unsigned long long xa, const long long* dims,                  \
                                    long long maxb, long long nblocks, double e,                   \
                                    const unsigned* offs, const unsigned long long* base,          \
                                    unsigned char* out) {                                          \
        __shared__ int qs[LZ_WARPS][64];                                                     \
        const float* x = (const float*)xa;                                                         \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;                                    \
        for (long long g = (long long)blockIdx.x * LZ_WARPS + w; g < nblocks;                      \
             g += (long long)gridDim.x * LZ_WARPS) {                                               \
            LzBlock B = lz_block((unsigned)g, (unsigned)maxb, d, b);                                                   \
            if (!B.on) continue;                                                                   \
            LzCode C = lz_code(x, B, e, qs[w]);                                                 \
            unsigned char* p = out + base[B.k] + B.nblk + offs[g];                                 \
            if (lane == 0) out[base[B.k] + B.j] = (unsigned char)C.head;                           \
            if (C.head == LZ_RAW) {                                                                \
                for (int h = 0; h < 2; h++) {                                                      \
                    int i = lane + 32 * h;                                                         \
                    if (i < B.n) {                                                                 \
                        unsigned u = __float_as_uint(C.v[h]);                                      \
                        for (int t = 0; t < 4; t++) p[4 * i + t] = (unsigned char)(u >> (8 * t));  \
                    }                                                                              \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            if (lane < C.kb) p[lane] = (unsigned char)(C.corner >> (8 * lane));                    \
            p += C.kb;                                                                             \
            unsigned nb = (B.n + 7) / 8;                                                           \
            unsigned long long mine = 0;                                                           \
            unsigned m0 = (unsigned)abs(C.r[0]), m1 = (unsigned)abs(C.r[1]);                      \
            for (unsigned pl = 0; C.rate > 0 && pl <= C.rate; pl++) {                              \
                bool b0 = pl == 0 ? C.r[0] < 0 : ((m0 >> (pl - 1)) & 1);                           \
                bool b1 = pl == 0 ? C.r[1] < 0 : ((m1 >> (pl - 1)) & 1);                           \
                unsigned lo = __ballot_sync(0xffffffffu, b0);                                      \
                unsigned hi = __ballot_sync(0xffffffffu, b1);                                      \
                if (lane == pl) mine = (unsigned long long)lo | ((unsigned long long)hi << 32);    \
            }                                                                                      \
            if (C.rate > 0 && lane <= C.rate)                                                      \
                for (unsigned t = 0; t < nb; t++)                                                  \
                    p[lane * nb + t] = (unsigned char)(mine >> (8 * t));                           \
        }                                                                                          \
    }

// Decoding: each block's body length from its head (sizes; a bad head
// or a brick whose blocks pass its payload sets bad[k]).
#define LZ_SIZES(name)                                                                             \
    extern "C" __global__ void name(const unsigned char* in, const unsigned long long* base,       \
                                    const long long* dims, long long maxb, long long nblocks,      \
                                    unsigned* sizes, unsigned* bad) {                              \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < nblocks;          \
             g += (long long)gridDim.x * blockDim.x) {                                             \
            LzBlock B = lz_block((unsigned)g, (unsigned)maxb, d, b);                                                   \
            unsigned len = 0;                                                                      \
            if (B.on) {                                                                            \
                unsigned h = in[base[B.k] + B.j];                                                  \
                unsigned kb = h >> 5, rate = h & 31, nb = (B.n + 7) / 8;                           \
                if (h == LZ_RAW) len = 4 * B.n;                                                    \
                else if (kb > 4) bad[B.k] = 1;                                                     \
                else len = kb + (rate > 0 ? nb * (1 + rate) : 0);                                  \
            }                                                                                      \
            sizes[g] = len;                                                                        \
        }                                                                                          \
    }

// Each block decoded into the field y (the residuals summed back along
// z, y and x in the warp's shared row), for the bricks the host found
// whole (their payloads as long as their heads say).
#define LZ_UNPACK(name)                                                                            \
    extern "C" __global__ void name(const unsigned char* in, const unsigned long long* base,       \
                                    const long long* dims, long long maxb, long long nblocks,      \
                                    double e, const unsigned* offs, float* y) {                    \
        __shared__ int qs[LZ_WARPS][64];                                                     \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;                                    \
        double s = 2.0 * e;                                                                        \
        for (long long g = (long long)blockIdx.x * LZ_WARPS + w; g < nblocks;                      \
             g += (long long)gridDim.x * LZ_WARPS) {                                               \
            LzBlock B = lz_block((unsigned)g, (unsigned)maxb, d, b);                                                   \
            if (!B.on) continue;                                                                   \
            const unsigned char* p = in + base[B.k] + B.nblk + offs[g];                            \
            unsigned h = in[base[B.k] + B.j];                                                      \
            int* q = qs[w];                                                                        \
            if (h == LZ_RAW) {                                                                     \
                for (int hh = 0; hh < 2; hh++) {                                                   \
                    int i = lane + 32 * hh;                                                        \
                    if (i < B.n) {                                                                 \
                        unsigned u = 0;                                                            \
                        for (int t = 0; t < 4; t++) u |= (unsigned)p[4 * i + t] << (8 * t);       \
                        y[lz_index(B, i)] = __uint_as_float(u);                                 \
                    }                                                                              \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            unsigned kb = h >> 5, rate = h & 31, nb = (B.n + 7) / 8;                               \
            unsigned corner = 0;                                                                   \
            for (unsigned t = 0; t < kb; t++) corner |= (unsigned)p[t] << (8 * t);                 \
            const unsigned char* pl = p + kb;                                                      \
            for (int hh = 0; hh < 2; hh++) {                                                       \
                int i = lane + 32 * hh;                                                            \
                int v = 0;                                                                         \
                if (i < B.n) {                                                                     \
                    unsigned byte = i / 8, bit = i % 8;                                            \
                    for (unsigned r = 0; r < rate; r++)                                            \
                        v |= (int)((pl[(1 + r) * nb + byte] >> bit) & 1) << r;                     \
                    if (rate > 0 && ((pl[byte] >> bit) & 1)) v = -v;                               \
                    if (i == 0) v = (int)(corner >> 1) ^ -(int)(corner & 1);                       \
                }                                                                                  \
                q[i] = v;                                                                          \
            }                                                                                      \
            __syncwarp();                                                                          \
            int e0 = B.ext[0], e1 = B.ext[1], e2 = B.ext[2];                                       \
            /* Running sums along x, then y, then z: a lane a row of each pass. */                 \
            for (int r = lane; r < e0 * e1; r += 32) {                                             \
                int acc = 0;                                                                       \
                for (int t = 0; t < e2; t++) { acc += q[r * e2 + t]; q[r * e2 + t] = acc; }        \
            }                                                                                      \
            __syncwarp();                                                                          \
            for (int r = lane; r < e0 * e2; r += 32) {                                             \
                int z = r / e2, xx = r % e2;                                                       \
                int acc = 0;                                                                       \
                for (int t = 0; t < e1; t++) {                                                     \
                    acc += q[(z * e1 + t) * e2 + xx];                                              \
                    q[(z * e1 + t) * e2 + xx] = acc;                                               \
                }                                                                                  \
            }                                                                                      \
            __syncwarp();                                                                          \
            for (int r = lane; r < e1 * e2; r += 32) {                                             \
                int acc = 0;                                                                       \
                for (int t = 0; t < e0; t++) { acc += q[t * e1 * e2 + r]; q[t * e1 * e2 + r] = acc; } \
            }                                                                                      \
            __syncwarp();                                                                          \
            for (int hh = 0; hh < 2; hh++) {                                                       \
                int i = lane + 32 * hh;                                                            \
                if (i < B.n) y[lz_index(B, i)] = (float)__dmul_rn((double)q[i], s);             \
            }                                                                                      \
            __syncwarp();                                                                          \
        }                                                                                          \
    }
