// The codec's kernels, part 2 of 4: quantization, the bound's check and
// the outliers, the Rice coder's sizes, scans and bits, and its decoder.

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

