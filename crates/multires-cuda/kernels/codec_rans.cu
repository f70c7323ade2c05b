// The codec's kernels, part 3 of 4: the rANS coder (histograms, plans,
// the encoder, its copies) and decoder.

// Counts per brick, context and symbol (a shared histogram per block).
// A warp takes R_HIST_UNROLL rows of 32 consecutive values a step, every
// row's loads issued before any is used (one row a step waited on its
// loads). When all of them share a bin (nearly every step on a smooth
// field) lane 0 adds them to a running count; otherwise each value is a
// shared-memory atomic (a match of equal bins first cost more than the
// atomics it saved on the turbulent field).
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
// instructions with branches, about 460 cycles on the turbulent
// field.) Two state warps a block of 64 chunks, with tiles of 16
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
// host (which took 0.9-1.5 ms of every batch's chain). The bytes must equal the host's: the integer steps
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

