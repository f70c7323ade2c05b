// The codec's kernels, part 4 of 4: value ranges, staged copies, payload
// checksums, the first bad value, gathers and scatters of bricks.

// Per block: the least and greatest finite value and whether any value
// is not finite (1.0f if so), into out[k], out[blocks + k] and
// out[2 blocks + k] (one read-back for all three), over `rows` rows of
// `width` values that start `pitch` values apart (a slab's piece of whole
// planes and some of their rows; one row for a span). Blocks take rows by
// blockIdx.y. Each row from its first 16-byte boundary in float4s: with a
// float a load, a turbulent 1024^3 slab's range ran at 1.8-2.2 of the
// H100's 3.35 TB/s.
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
// tail, whatever its size (the timeline).
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
