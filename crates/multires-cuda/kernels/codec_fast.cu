// ---- The fast profile (multires::codec::lorenzo) on the device ----
// A thread codes one block of up to 64 values: quantization to steps of
// twice the bound checked as the decoder reconstructs (float64, FMA
// contraction off for this program), the Lorenzo residuals, the bit
// length, and the bit planes written as whole aligned words. Whole blocks
// (4^3, 8^2, 64) are compiled for their extent, so their 64 integers stay
// in registers and their rows load as float4; clipped ones take the same
// code with extents read at run time. The bytes equal the host coder's.
// Blocks are numbered brick by brick, `maxb` numbers a brick (a full
// brick's count; an edge brick's extra numbers are idle).
//
// A warp a block (lanes sharing its values through shared memory and
// ballots) issued about ten times the instructions a value: 130-160 GB/s
// on the H200, latency-bound at 3-5% of DRAM bandwidth.

#define LZ_RAW 0xFFu
// Blocks of at most this many magnitude planes are packed bit by bit
// (LZ_CODE 10% faster on the turbulent field at 1e-2); unpacking them so
// was 15% slower than the transposition's independent loads.
#define LZ_FEW_PLANES 3u
// LZ_CODE's tile: 256 threads, two tiles an SM (104 registers a thread).
// Tiles of 64 and 128 blocks coded 15-25% slower: each tile waits on its
// look-back once.
#define LZ_TILE 256
#define LZ_QMAX 134217728.0

// A thread's block. Index arithmetic in 32 bits (a field of 2^32 blocks
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
    bool full;         // every block of the brick whole (one shape a brick)
    unsigned shape;    // the brick's blocks: 0 4^3, 1 8^2, 2 64
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
        B.shape = 0;
    } else if (be[1] > 1) {
        E[0] = 1; E[1] = 8; E[2] = 8;
        B.shape = 1;
    } else {
        E[0] = 1; E[1] = 1; E[2] = 64;
        B.shape = 2;
    }
    unsigned gb[3];
    for (int a = 0; a < 3; a++) gb[a] = (be[a] + E[a] - 1) / E[a];
    B.full = be[0] % E[0] == 0 && be[1] % E[1] == 0 && be[2] % E[2] == 0;
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

// A block's extent: compiled in for whole blocks, read at run time for
// clipped ones (their integers then live in local memory).
template <int Z, int Y, int X> struct LzFixed {
    static constexpr bool fixed = Z * Y * X == 64;
    static constexpr bool vec4 = X % 4 == 0;
    static constexpr int z = Z, y = Y, x = X;
};
struct LzAny {
    static constexpr bool fixed = false;
    static constexpr bool vec4 = false;
    int z, y, x;
};

// Runs CALL with `ex` the extent of block B.
#define LZ_SHAPED(B, CALL)                                                                         \
    if (B.ext[0] == 4 && B.ext[1] == 4 && B.ext[2] == 4) {                                         \
        LzFixed<4, 4, 4> ex;                                                                       \
        CALL;                                                                                      \
    } else if (B.ext[0] == 1 && B.ext[1] == 8 && B.ext[2] == 8) {                                  \
        LzFixed<1, 8, 8> ex;                                                                       \
        CALL;                                                                                      \
    } else if (B.ext[0] == 1 && B.ext[1] == 1 && B.ext[2] == 64) {                                 \
        LzFixed<1, 1, 64> ex;                                                                      \
        CALL;                                                                                      \
    } else {                                                                                       \
        LzAny ex{B.ext[0], B.ext[1], B.ext[2]};                                                    \
        CALL;                                                                                      \
    }

// Whether the block's rows can move as float4 (16-byte aligned starts).
template <class E>
__device__ __forceinline__ bool lz_vec(const float* f, const LzBlock& B) {
    if (!E::vec4) return false;
    unsigned long long a = (unsigned long long)(f + B.row0) | (unsigned long long)B.plane * 4 |
                           (unsigned long long)B.d2 * 4;
    return (a & 15) == 0;
}

// The first value of row r (z, y) of the block.
template <class E>
__device__ __forceinline__ long long lz_row(const LzBlock& B, E ex, int r) {
    return B.row0 + (long long)(r / ex.y) * B.plane + (long long)(r % ex.y) * B.d2;
}

// 1.5 * 2^52: v + LZ_MAGIC rounds v to an integer, ties to even, for
// |v| < 2^51 (the sum's unit in the last place is 1), and that integer is
// the sum's low word. Two additions instead of round() and two
// conversions, which the SMs issue at a quarter of the additions' rate.
#define LZ_MAGIC 6755399441055744.0

// One value quantized as the host does; 0 and ok cleared when it does not
// fit (NaN and infinities fail the first test, as do values whose
// rounding the magic sum cannot do, all far past LZ_QMAX).
__device__ __forceinline__ int lz_q(float xv, double s, double inv, double e, bool& ok,
                                    double& maxe, double& sse) {
    double xd = (double)xv;
    double t = __dadd_rn(__dmul_rn(xd, inv), LZ_MAGIC);
    double qf = __dsub_rn(t, LZ_MAGIC);
    bool fit = fabs(qf) <= LZ_QMAX;
    double err = fit ? fabs((double)(float)__dmul_rn(qf, s) - xd) : 0.0;
    fit = fit && err <= e;
    ok = ok && fit;
    if (!fit) return 0;
    maxe = fmax(maxe, err);
    sse += err * err;
    return __double2loint(t);
}

// (double)q exactly, by the magic sum backwards (an addition instead of
// a conversion): 2^52 + 2^31 + q has q + 2^31 as its low word.
__device__ __forceinline__ double lz_double(int q) {
    return __dsub_rn(__hiloint2double(0x43300000, (int)((unsigned)q ^ 0x80000000u)),
                     4503601774854144.0);
}

// The block's integers q (row-major in the block); whether all fit.
template <class E>
__device__ __forceinline__ bool lz_quantize(const float* x, const LzBlock& B, E ex, double e,
                                            int* q, double& maxe, double& sse) {
    double s = 2.0 * e, inv = 1.0 / s;
    bool ok = s > 0.0;
    const int X = ex.x;
    const bool vec = lz_vec<E>(x, B);
#pragma unroll
    for (int r = 0; r < ex.z * ex.y; r++) {
        const float* p = x + lz_row(B, ex, r);
        if (E::vec4 && vec) {
#pragma unroll
            for (int t = 0; t < X; t += 4) {
                float4 f = *(const float4*)(p + t);
                q[r * X + t] = lz_q(f.x, s, inv, e, ok, maxe, sse);
                q[r * X + t + 1] = lz_q(f.y, s, inv, e, ok, maxe, sse);
                q[r * X + t + 2] = lz_q(f.z, s, inv, e, ok, maxe, sse);
                q[r * X + t + 3] = lz_q(f.w, s, inv, e, ok, maxe, sse);
            }
        } else {
#pragma unroll
            for (int t = 0; t < X; t++) q[r * X + t] = lz_q(p[t], s, inv, e, ok, maxe, sse);
        }
    }
    return ok;
}

// The Lorenzo residuals in place, as the host predicts: the first
// difference along x, then y, then z, nothing before the block.
template <class E> __device__ __forceinline__ void lz_predict(int* q, E ex) {
    const int X = ex.x, YX = ex.y * ex.x, N = ex.z * YX;
#pragma unroll
    for (int r = 0; r < ex.z * ex.y; r++)
#pragma unroll
        for (int i = X - 1; i >= 1; i--) q[r * X + i] -= q[r * X + i - 1];
#pragma unroll
    for (int p = 0; p < ex.z; p++)
#pragma unroll
        for (int i = YX - 1; i >= X; i--) q[p * YX + i] -= q[p * YX + i - X];
#pragma unroll
    for (int i = N - 1; i >= YX; i--) q[i] -= q[i - YX];
}

// `lz_predict`'s inverse: running sums along z, y, x.
template <class E> __device__ __forceinline__ void lz_unpredict(int* q, E ex) {
    const int X = ex.x, YX = ex.y * ex.x, N = ex.z * YX;
#pragma unroll
    for (int i = YX; i < N; i++) q[i] += q[i - YX];
#pragma unroll
    for (int p = 0; p < ex.z; p++)
#pragma unroll
        for (int i = X; i < YX; i++) q[p * YX + i] += q[p * YX + i - X];
#pragma unroll
    for (int r = 0; r < ex.z * ex.y; r++)
#pragma unroll
        for (int i = 1; i < X; i++) q[r * X + i] += q[r * X + i - 1];
}

__device__ __forceinline__ unsigned lz_zigzag(int v) {
    return (unsigned)((v << 1) ^ (v >> 31));
}

// A block's head: `head` (LZ_RAW or kb << 5 | rate), its body's length,
// the corner's zigzagged integer and the sign plane (bit i: value i).
struct LzHead {
    unsigned head, len, rate, kb, corner, sign[2];
};

// The head and length of a block that is not raw, from its corner (in H)
// and the OR of its residuals' magnitudes (the largest one's bit length).
__device__ __forceinline__ void lz_head(LzHead& H, unsigned peak, int n) {
    H.rate = peak == 0 ? 0 : 32 - __clz(peak);
    H.kb = H.corner == 0 ? 0 : (32 - __clz(H.corner) + 7) / 8;
    H.head = (H.kb << 5) | H.rate;
    H.len = H.kb + (H.rate > 0 ? (n + 7) / 8 * (1 + H.rate) : 0);
}

// Codes a block: q becomes the residuals' magnitudes (q[0], the corner,
// zero); maxe and sse count only a block that is not raw.
template <class E>
__device__ __forceinline__ LzHead lz_code(const float* x, const LzBlock& B, E ex, double e, int* q,
                                          double& maxe, double& sse) {
    const int n = ex.z * ex.y * ex.x;
    LzHead H = {LZ_RAW, 4u * n, 0, 0, 0, {0, 0}};
    maxe = 0.0;
    sse = 0.0;
    if (!lz_quantize(x, B, ex, e, q, maxe, sse)) {
        maxe = 0.0;
        sse = 0.0;
        return H;
    }
    lz_predict(q, ex);
    H.corner = lz_zigzag(q[0]);
    q[0] = 0;
    // The OR of the magnitudes has the largest one's bit length.
    unsigned peak = 0;
#pragma unroll
    for (int i = 0; i < n; i++) {
        H.sign[i >> 5] |= (unsigned)(q[i] < 0) << (i & 31);
        q[i] = abs(q[i]);
        peak |= (unsigned)q[i];
    }
    lz_head(H, peak, n);
    return H;
}

// Adds a warp's block statistics to their bricks: one atomic each when
// the warp's blocks share a brick, else a lane's own.
__device__ __forceinline__ void lz_stats(const LzBlock& B, double m, double s2,
                                         unsigned long long nraw, unsigned long long* maxe,
                                         double* sse, unsigned long long* raw) {
    unsigned k0 = __shfl_sync(0xffffffffu, B.k, 0);
    if (__all_sync(0xffffffffu, !B.on || B.k == k0)) {
        bool any = __ballot_sync(0xffffffffu, B.on) != 0;
        for (int o = 16; o > 0; o >>= 1) {
            m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
            s2 += __shfl_down_sync(0xffffffffu, s2, o);
            nraw += __shfl_down_sync(0xffffffffu, nraw, o);
        }
        if ((threadIdx.x & 31) == 0 && any) {
            atomicMax(&maxe[k0], (unsigned long long)__double_as_longlong(m));
            atomicAdd(&sse[k0], s2);
            if (nraw) atomicAdd(&raw[k0], nraw);
        }
    } else if (B.on) {
        atomicMax(&maxe[B.k], (unsigned long long)__double_as_longlong(m));
        atomicAdd(&sse[B.k], s2);
        if (nraw) atomicAdd(&raw[B.k], nraw);
    }
}

// Brick k's exclusive scan of its maxb sizes into offs, and its total
// into tot[k]: a block of 1024 threads a brick, 4096 sizes a round, each
// thread four neighbours (loads the warp coalesces), warps scanned by
// shuffles. A thread's own run of maxb / 1024 sizes read 250 GB/s.
#define LZ_SCAN(name)                                                                              \
    extern "C" __global__ void name(const unsigned* sizes, long long maxb, unsigned* offs,         \
                                    unsigned long long* tot) {                                     \
        __shared__ unsigned long long wsum[32];                                                    \
        long long k = blockIdx.x;                                                                  \
        const unsigned* s = sizes + k * maxb;                                                      \
        unsigned* o = offs + k * maxb;                                                             \
        unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;                                    \
        unsigned long long carry = 0;                                                              \
        for (long long r0 = 0; r0 < maxb; r0 += 4096) {                                            \
            long long a = r0 + 4 * threadIdx.x;                                                    \
            unsigned v[4];                                                                         \
            unsigned long long mine = 0;                                                           \
            for (int t = 0; t < 4; t++) {                                                          \
                v[t] = a + t < maxb ? s[a + t] : 0;                                                \
                mine += v[t];                                                                      \
            }                                                                                      \
            unsigned long long inc = mine;                                                         \
            for (int d = 1; d < 32; d <<= 1) {                                                     \
                unsigned long long up = __shfl_up_sync(0xffffffffu, inc, d);                       \
                if (lane >= (unsigned)d) inc += up;                                                \
            }                                                                                      \
            if (lane == 31) wsum[w] = inc;                                                         \
            __syncthreads();                                                                       \
            unsigned long long before = carry;                                                     \
            for (unsigned u = 0; u < w; u++) before += wsum[u];                                    \
            unsigned long long all = carry;                                                        \
            for (unsigned u = 0; u < 32; u++) all += wsum[u];                                      \
            __syncthreads();                                                                       \
            unsigned long long run = before + inc - mine;                                          \
            for (int t = 0; t < 4; t++) {                                                          \
                if (a + t < maxb) o[a + t] = (unsigned)run;                                        \
                run += v[t];                                                                       \
            }                                                                                      \
            carry = all;                                                                           \
        }                                                                                          \
        if (threadIdx.x == 0) tot[k] = carry;                                                      \
    }

// One stage of a 32 x 32 bit-matrix transposition: the J x J corners of
// each 2J x 2J tile swapped (loops the compiler unrolls: affine bounds).
template <int J, unsigned M> __device__ __forceinline__ void lz_tstage(int* a) {
#pragma unroll
    for (int g = 0; g < 32; g += 2 * J)
#pragma unroll
        for (int i = 0; i < J; i++) {
            unsigned lo = (unsigned)a[g + i], hi = (unsigned)a[g + i + J];
            unsigned t = ((lo >> J) ^ hi) & M;
            a[g + i + J] = (int)(hi ^ t);
            a[g + i] = (int)(lo ^ (t << J));
        }
}

// a[r] bit c to a[c] bit r, in place: 32 values' magnitudes to their bit
// planes and back in about 400 operations whatever the rate, where
// spreading plane by plane takes about 3 a value and a plane.
__device__ __forceinline__ void lz_transpose32(int* a) {
    lz_tstage<16, 0x0000FFFFu>(a);
    lz_tstage<8, 0x00FF00FFu>(a);
    lz_tstage<4, 0x0F0F0F0Fu>(a);
    lz_tstage<2, 0x33333333u>(a);
    lz_tstage<1, 0x55555555u>(a);
}

// Bytes written in order from any address: whole aligned words as one
// store, the bytes before the first and after the last one by one (they
// share words with the neighbouring blocks, whose bytes they leave).
struct LzWriter {
    unsigned char* p;         // the next byte's place
    unsigned long long acc;   // bytes not yet written, the first lowest
    unsigned have;            // how many
};

// Appends the low `nb` (0-4) bytes of v, whose higher bytes are zero.
__device__ __forceinline__ void lz_put(LzWriter& w, unsigned v, unsigned nb) {
    w.acc |= (unsigned long long)v << (8 * w.have);
    w.have += nb;
    while (w.have > 0) {
        if (((unsigned long long)w.p & 3) == 0) {
            if (w.have < 4) break;
            *(unsigned*)w.p = (unsigned)w.acc;
            w.acc >>= 32;
            w.have -= 4;
            w.p += 4;
        } else {
            *w.p = (unsigned char)w.acc;
            w.acc >>= 8;
            w.have--;
            w.p++;
        }
    }
}

__device__ __forceinline__ void lz_flush(LzWriter& w) {
    for (; w.have > 0; w.have--, w.p++, w.acc >>= 8) *w.p = (unsigned char)w.acc;
}

// A plane of n values (two 32-bit halves) as its (n + 7) / 8 bytes.
__device__ __forceinline__ void lz_put_plane(LzWriter& w, unsigned lo, unsigned hi, int n) {
    unsigned nb = (n + 7) / 8;
    lz_put(w, lo, min(nb, 4u));
    if (nb > 4) lz_put(w, hi, nb - 4);
}

// Writes block B's body at w (its head is written by the caller).
template <class E>
__device__ __forceinline__ void lz_pack(const float* x, const LzBlock& B, E ex, const LzHead& H,
                                        int* q, LzWriter& w) {
    const int n = ex.z * ex.y * ex.x;
    if (H.head == LZ_RAW) {
        // Rare: the values read again rather than held in registers.
        for (int r = 0; r < ex.z * ex.y; r++) {
            const float* p = x + lz_row(B, ex, r);
            for (int t = 0; t < ex.x; t++) lz_put(w, __float_as_uint(p[t]), 4);
        }
        return;
    }
    lz_put(w, H.corner, H.kb);
    if (H.rate == 0) return;
    lz_put_plane(w, H.sign[0], H.sign[1], n);
    if constexpr (E::fixed) {
        if (H.rate <= LZ_FEW_PLANES) {
            // A few planes gathered bit by bit (3 operations a value and
            // a plane) cost less than the transposition (about 15).
            for (unsigned pl = 0; pl < H.rate; pl++) {
                unsigned lo = 0, hi = 0;
#pragma unroll
                for (int i = 0; i < 32; i++) {
                    lo |= (((unsigned)q[i] >> pl) & 1u) << i;
                    hi |= (((unsigned)q[32 + i] >> pl) & 1u) << i;
                }
                lz_put(w, lo, 4);
                lz_put(w, hi, 4);
            }
            return;
        }
        // 64 values: the magnitudes become the planes' halves in place.
        lz_transpose32(q);
        lz_transpose32(q + 32);
#pragma unroll
        for (int pl = 0; pl < 32; pl++)
            if (pl < (int)H.rate) {
                lz_put(w, (unsigned)q[pl], 4);
                lz_put(w, (unsigned)q[32 + pl], 4);
            }
        return;
    }
    for (unsigned pl = 0; pl < H.rate; pl++) {
        unsigned lo = 0, hi = 0;
#pragma unroll
        for (int i = 0; i < n; i++) {
            unsigned bit = ((unsigned)q[i] >> pl) & 1u;
            if (i < 32) lo |= bit << i;
            else hi |= bit << (i - 32);
        }
        lz_put_plane(w, lo, hi, n);
    }
}

// ---- Compressing in one pass (LZ_CODE) ----
// Tiles of blockDim.x consecutive blocks of one brick, taken in order by a
// ticket (so every tile a tile waits on is running or done). A tile codes
// its blocks, sums their body lengths, publishes the sum for the tiles
// after it and finds its own place by looking back over the tiles before
// it (a decoupled look-back, as single-pass prefix scans do), then writes
// its heads and bodies from the registers that hold them: the field is
// read once, where measuring and packing read it twice.
//
// A tile's status word: 0 while it codes, LZ_AGG | its bytes (bodies, and
// a brick's heads on its first tile), LZ_INC | the payloads' bytes up to
// its end. A brick's last tile publishes only the latter: its brick ends
// padded to a whole word, which depends on where the brick started.
#define LZ_AGG (1ull << 62)
#define LZ_INC (2ull << 62)
#define LZ_VAL ((1ull << 62) - 1)

// Where a tile's thread writes: its brick's start (heads at base + j) and
// its block's body; `write` when the tile ends within the buffer's `cap`.
struct LzPlace {
    unsigned long long base, body;
    bool write;
};

// The tile's places from each thread's body length `len` (every thread
// of the tile calls it): tile t is tile i of brick k (tpb tiles a brick
// of nblk blocks). A brick's last tile records its padded length in
// blen[k] and writes the padding's zero bytes.
__device__ __forceinline__ LzPlace lz_place(unsigned len, unsigned t, unsigned k, unsigned i,
                                            unsigned tpb, unsigned nblk,
                                            unsigned long long* status, unsigned long long* bbase,
                                            unsigned long long* blen, unsigned long long cap,
                                            unsigned char* out) {
    __shared__ unsigned long long lz_wsum[32];
    __shared__ unsigned long long lz_at[3];   // the tile's start, its brick's, its end
    unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    unsigned long long inc = len;
    for (int d = 1; d < 32; d <<= 1) {
        unsigned long long up = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= (unsigned)d) inc += up;
    }
    if (lane == 31) lz_wsum[w] = inc;
    __syncthreads();
    unsigned long long before = 0, sum = 0;
    for (unsigned u = 0; u < nw; u++) {
        if (u < w) before += lz_wsum[u];
        sum += lz_wsum[u];
    }
    const bool last = i + 1 == tpb;
    const unsigned long long heads = i == 0 ? nblk : 0, c = sum + heads;
    if (w == 0) {
        volatile unsigned long long* st = status;
        if (lane == 0 && !last) st[t] = LZ_AGG | c;
        // Sums the tiles before t back to the nearest inclusive one, 32 a
        // round (lane l reads tile p - l); before tile 0, an inclusive 0.
        unsigned long long excl = 0, base = 0;
        long long p = (long long)t - 1;
        while (true) {
            long long q = p - (long long)lane;
            unsigned long long s = q >= 0 ? st[q] : LZ_INC;
            unsigned inc_l = __ballot_sync(0xffffffffu, (s >> 62) == 2);
            unsigned none = __ballot_sync(0xffffffffu, (s >> 62) == 0);
            unsigned lp = inc_l ? (unsigned)__ffs((int)inc_l) - 1 : 32;
            unsigned nearer = lp == 32 ? 0xffffffffu : (1u << lp) - 1;
            if (none & nearer) continue;   // a tile in between still codes
            unsigned long long v = lane <= lp ? (s & LZ_VAL) : 0;
            for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
            excl += __shfl_sync(0xffffffffu, v, 0);
            if (lp < 32) {
                // The walk stops at brick k - 1's last tile at the latest
                // (it publishes no sum): its end is brick k's start;
                // a later inclusive tile recorded that start first.
                long long tp = p - (long long)lp;
                unsigned long long pv = __shfl_sync(0xffffffffu, s & LZ_VAL, lp);
                if (tp < (long long)k * tpb) {
                    base = pv;
                } else {
                    __threadfence();
                    base = ((volatile unsigned long long*)bbase)[k];
                }
                break;
            }
            p -= 32;
        }
        if (lane == 0) {
            unsigned long long end = excl + c, incl = last ? (end + 3) & ~3ull : end;
            ((volatile unsigned long long*)bbase)[k] = base;
            if (last) blen[k] = incl - base;
            __threadfence();
            st[t] = LZ_INC | incl;
            lz_at[0] = excl;
            lz_at[1] = base;
            lz_at[2] = incl;
            if (last && incl <= cap)
                for (unsigned long long a = end; a < incl; a++) out[a] = 0;
        }
    }
    __syncthreads();
    LzPlace P;
    P.base = lz_at[1];
    P.body = lz_at[0] + heads + before + inc - len;
    P.write = lz_at[2] <= cap;
    return P;
}

// A tile of a brick whose blocks all have extent E: each block's integers
// stay in registers from coding to writing.
template <class E>
__device__ __forceinline__ void lz_tile(const float* x, const LzBlock& B, E ex, double e,
                                        unsigned t, unsigned i, unsigned tpb,
                                        unsigned long long* status, unsigned long long* bbase,
                                        unsigned long long* blen, unsigned long long cap,
                                        unsigned char* out, unsigned long long* maxe, double* sse,
                                        unsigned long long* raw) {
    int q[64];
    LzHead H = {0, 0, 0, 0, 0, {0, 0}};
    double m = 0.0, s2 = 0.0;
    unsigned long long nraw = 0;
    if (B.on) {
        H = lz_code(x, B, ex, e, q, m, s2);
        if (H.head == LZ_RAW) nraw = (unsigned long long)B.n;
    }
    lz_stats(B, m, s2, nraw, maxe, sse, raw);
    LzPlace P = lz_place(B.on ? H.len : 0, t, B.k, i, tpb, B.nblk, status, bbase, blen, cap, out);
    if (B.on && P.write) {
        out[P.base + B.j] = (unsigned char)H.head;
        LzWriter wr = {out + P.body, 0, 0};
        lz_pack(x, B, ex, H, q, wr);
        lz_flush(wr);
    }
}

// A tile of a brick with clipped blocks: coded once for the lengths and
// again to write (such bricks lie at the field's edges).
__device__ __forceinline__ void lz_tile_any(const float* x, const LzBlock& B, double e, unsigned t,
                                            unsigned i, unsigned tpb, unsigned long long* status,
                                            unsigned long long* bbase, unsigned long long* blen,
                                            unsigned long long cap, unsigned char* out,
                                            unsigned long long* maxe, double* sse,
                                            unsigned long long* raw) {
    double m = 0.0, s2 = 0.0;
    unsigned long long nraw = 0;
    unsigned len = 0;
    if (B.on) {
        int q[64];
        LZ_SHAPED(B, {
            LzHead H = lz_code(x, B, ex, e, q, m, s2);
            len = H.len;
            if (H.head == LZ_RAW) nraw = (unsigned long long)B.n;
        })
    }
    lz_stats(B, m, s2, nraw, maxe, sse, raw);
    LzPlace P = lz_place(len, t, B.k, i, tpb, B.nblk, status, bbase, blen, cap, out);
    if (B.on && P.write) {
        int q[64];
        LzWriter wr = {out + P.body, 0, 0};
        LZ_SHAPED(B, {
            LzHead H = lz_code(x, B, ex, e, q, m, s2);
            out[P.base + B.j] = (unsigned char)H.head;
            lz_pack(x, B, ex, H, q, wr);
        })
        lz_flush(wr);
    }
}

// Every brick's payload at its place in `out` (cap bytes; a tile that
// would end past it writes nothing, and the host codes again into a
// buffer of the length blen gives), its length in blen and its start in
// bbase; status (a word a tile) and the ticket zeroed before.
#define LZ_CODE(name)                                                                              \
    extern "C" __global__ void __launch_bounds__(LZ_TILE, 2)                                       \
        name(unsigned long long xa, const long long* dims, long long maxb, long long tpb, double e, \
             unsigned long long* status, unsigned* ticket, unsigned long long* bbase,              \
             unsigned long long* blen, unsigned long long cap, unsigned char* out,                 \
             unsigned long long* maxe, double* sse, unsigned long long* raw) {                     \
        __shared__ unsigned lz_ticket;                                                             \
        const float* x = (const float*)xa;                                                         \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        if (threadIdx.x == 0) lz_ticket = atomicAdd(ticket, 1u);                                   \
        __syncthreads();                                                                           \
        unsigned t = lz_ticket, tb = (unsigned)tpb, k = t / tb, i = t - k * tb;                    \
        unsigned j = i * blockDim.x + threadIdx.x;                                                 \
        bool live = j < (unsigned)maxb;                                                            \
        LzBlock B = lz_block(k * (unsigned)maxb + (live ? j : 0), (unsigned)maxb, d, b);           \
        B.on = B.on && live;                                                                       \
        if (!B.full) {                                                                             \
            lz_tile_any(x, B, e, t, i, tb, status, bbase, blen, cap, out, maxe, sse, raw);         \
        } else if (B.shape == 0) {                                                                 \
            lz_tile(x, B, LzFixed<4, 4, 4>{}, e, t, i, tb, status, bbase, blen, cap, out, maxe,    \
                    sse, raw);                                                                     \
        } else if (B.shape == 1) {                                                                 \
            lz_tile(x, B, LzFixed<1, 8, 8>{}, e, t, i, tb, status, bbase, blen, cap, out, maxe,    \
                    sse, raw);                                                                     \
        } else {                                                                                   \
            lz_tile(x, B, LzFixed<1, 1, 64>{}, e, t, i, tb, status, bbase, blen, cap, out, maxe,   \
                    sse, raw);                                                                     \
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

// Bytes read in order from any address, as the aligned words that hold
// them (so no read passes the payload's last word).
struct LzReader {
    const unsigned char* p;   // the next byte not yet in acc
    unsigned long long acc;
    unsigned have;
};

// The next nb (0-4) bytes, the first lowest.
__device__ __forceinline__ unsigned lz_get(LzReader& r, unsigned nb) {
    while (r.have < nb) {
        unsigned mis = (unsigned)((unsigned long long)r.p & 3);
        unsigned word = *(const unsigned*)(r.p - mis);
        r.acc |= (unsigned long long)(word >> (8 * mis)) << (8 * r.have);
        r.have += 4 - mis;
        r.p += 4 - mis;
    }
    unsigned v = (unsigned)r.acc & (nb == 4 ? 0xffffffffu : (1u << (8 * nb)) - 1);
    r.acc >>= 8 * nb;
    r.have -= nb;
    return v;
}

// Plane j of the 8-byte planes (blocks of 64 values) from address a on,
// from the two or three aligned words that hold it.
__device__ __forceinline__ void lz_plane8(const unsigned char* a, unsigned j, unsigned& lo,
                                          unsigned& hi) {
    unsigned c = (unsigned)((unsigned long long)a & 3);
    const unsigned* w = (const unsigned*)(a - c) + 2 * j;
    unsigned w0 = w[0], w1 = w[1], w2 = c ? w[2] : 0;
    lo = __funnelshift_r(w0, w1, 8 * c);
    hi = __funnelshift_r(w1, w2, 8 * c);
}

// Magnitude plane pl (bit i: value i) into the integers q.
__device__ __forceinline__ void lz_spread(int* q, unsigned lo, unsigned hi, unsigned pl, int n) {
#pragma unroll
    for (int i = 0; i < n; i++) q[i] |= (int)((((i < 32 ? lo >> i : hi >> (i - 32)) & 1u)) << pl);
}

// Decodes block B (head h, body at r) into the field y.
template <class E>
__device__ __forceinline__ void lz_unpack(LzReader& r, unsigned h, const LzBlock& B, E ex,
                                          double s, float* y) {
    const int X = ex.x, n = ex.z * ex.y * ex.x;
    if (h == LZ_RAW) {
        for (int row = 0; row < ex.z * ex.y; row++) {
            float* p = y + lz_row(B, ex, row);
            for (int t = 0; t < X; t++) p[t] = __uint_as_float(lz_get(r, 4));
        }
        return;
    }
    unsigned kb = h >> 5, rate = h & 31, nb = (n + 7) / 8;
    int q[64];
#pragma unroll
    for (int i = 0; i < n; i++) q[i] = 0;
    unsigned corner = lz_get(r, kb);
    if (rate > 0) {
        unsigned slo, shi;
        if constexpr (E::fixed) {
            // 64 values: every plane's loads at once, each independent of
            // the others, then the planes' halves become the magnitudes.
            const unsigned char* a = r.p - r.have;
            lz_plane8(a, 0, slo, shi);
#pragma unroll
            for (int pl = 0; pl < 32; pl++) {
                unsigned lo = 0, hi = 0;
                if (pl < (int)rate) lz_plane8(a, pl + 1, lo, hi);
                q[pl] = (int)lo;
                q[32 + pl] = (int)hi;
            }
            lz_transpose32(q);
            lz_transpose32(q + 32);
        } else {
            slo = lz_get(r, min(nb, 4u));
            shi = nb > 4 ? lz_get(r, nb - 4) : 0;
            for (unsigned pl = 0; pl < rate; pl++) {
                unsigned lo = lz_get(r, min(nb, 4u)), hi = nb > 4 ? lz_get(r, nb - 4) : 0;
                lz_spread(q, lo, hi, pl, n);
            }
        }
#pragma unroll
        for (int i = 0; i < n; i++)
            if (((i < 32 ? slo >> i : shi >> (i - 32)) & 1u) != 0) q[i] = -q[i];
    }
    q[0] = (int)(corner >> 1) ^ -(int)(corner & 1);
    lz_unpredict(q, ex);
    const bool vec = lz_vec<E>(y, B);
#pragma unroll
    for (int row = 0; row < ex.z * ex.y; row++) {
        float* p = y + lz_row(B, ex, row);
        if (E::vec4 && vec) {
#pragma unroll
            for (int t = 0; t < X; t += 4) {
                float4 f;
                f.x = (float)__dmul_rn(lz_double(q[row * X + t]), s);
                f.y = (float)__dmul_rn(lz_double(q[row * X + t + 1]), s);
                f.z = (float)__dmul_rn(lz_double(q[row * X + t + 2]), s);
                f.w = (float)__dmul_rn(lz_double(q[row * X + t + 3]), s);
                *(float4*)(p + t) = f;
            }
        } else {
#pragma unroll
            for (int t = 0; t < X; t++) p[t] = (float)__dmul_rn(lz_double(q[row * X + t]), s);
        }
    }
}

// Each block decoded into the field y, for the bricks the host found
// whole (their payloads as long as their heads say).
#define LZ_UNPACK(name)                                                                            \
    extern "C" __global__ void name(const unsigned char* in, const unsigned long long* base,       \
                                    const long long* dims, long long maxb, long long nblocks,      \
                                    double e, const unsigned* offs, float* y) {                    \
        long long d[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[3], dims[4], dims[5]};          \
        double s = 2.0 * e;                                                                        \
        for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < nblocks;          \
             g += (long long)gridDim.x * blockDim.x) {                                             \
            LzBlock B = lz_block((unsigned)g, (unsigned)maxb, d, b);                               \
            if (!B.on) continue;                                                                   \
            const unsigned char* o = in + base[B.k];                                               \
            LzReader r = {o + B.nblk + offs[g], 0, 0};                                             \
            unsigned h = o[B.j];                                                                   \
            LZ_SHAPED(B, lz_unpack(r, h, B, ex, s, y))                                             \
        }                                                                                          \
    }
