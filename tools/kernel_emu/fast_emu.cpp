// The fast profile's kernels (codec_fast.cu) run on the CPU against
// multires::codec::lorenzo over the cases `write_fast_cases` writes: each
// brick's payload byte for byte (LZ_CODE, also into a buffer too short,
// which it must leave past its end untouched and report the lengths of)
// and the decoded values bit for bit (LZ_SIZES, LZ_SCAN, LZ_UNPACK).
#include KERNEL_COMMON
#include KERNEL_CODEC
#include <cstdio>
#include <fstream>
#include <iterator>

LZ_CODE(lz_code_tiles)
LZ_SCAN(lz_scan)
LZ_SIZES(lz_sizes)
LZ_UNPACK(lz_unpack)

static std::vector<unsigned char> in;
static size_t at = 0;
template <typename T> T get() {
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
}

// Blocks of a brick of extent be (multires::codec::lorenzo::block_extent).
static long long blocks_of(const long long* be) {
    long long E[3] = {4, 4, 4};
    if (be[0] <= 1) { E[0] = 1; E[1] = be[1] > 1 ? 8 : 1; E[2] = be[1] > 1 ? 8 : 64; }
    long long n = 1;
    for (int a = 0; a < 3; a++) n *= (be[a] + E[a] - 1) / E[a];
    return n;
}

int main(int argc, char** argv) {
    std::ifstream f(argv[1], std::ios::binary);
    in.assign(std::istreambuf_iterator<char>(f), {});
    int bad = 0, cases = 0;
    while (at < in.size()) {
        long long dims[6];
        for (auto& d : dims) d = (long long)get<unsigned long long>();
        double e = get<double>();
        long long n = dims[0] * dims[1] * dims[2];
        std::vector<float> x(n);
        for (auto& v : x) v = get<float>();
        long long nbk = (long long)get<unsigned long long>();
        std::vector<std::vector<unsigned char>> want(nbk);
        for (auto& p : want) {
            p.resize(get<unsigned long long>());
            for (auto& c : p) c = get<unsigned char>();
        }
        std::vector<float> yw(n);
        for (auto& v : yw) v = get<float>();
        // Blocks a brick: the largest brick's count (as fast.rs lays them).
        long long G[3], nblk_k[4096], maxb = 0;
        for (int a = 0; a < 3; a++) G[a] = (dims[a] + dims[3 + a] - 1) / dims[3 + a];
        for (long long k = 0; k < nbk; k++) {
            long long kk[3] = {k / (G[1] * G[2]), k / G[2] % G[1], k % G[2]}, be[3];
            for (int a = 0; a < 3; a++) be[a] = std::min(dims[3 + a], dims[a] - kk[a] * dims[3 + a]);
            nblk_k[k] = blocks_of(be);
            maxb = std::max(maxb, nblk_k[k]);
        }
        long long nblocks = nbk * maxb;
        std::vector<unsigned> sizes(nblocks), offs(nblocks);
        std::vector<unsigned long long> maxe(nbk), raw(nbk), tot(nbk), base(nbk), blen(nbk);
        std::vector<double> sse(nbk);
        const unsigned tile = LZ_TILE;
        long long tpb = (maxb + tile - 1) / tile, ntiles = nbk * tpb;
        // LZ_CODE into `cap` bytes (a guard after them), as fast.rs runs it.
        auto code = [&](size_t cap, std::vector<unsigned char>& out) {
            std::vector<unsigned long long> status(ntiles, 0);
            unsigned ticket = 0;
            std::fill(maxe.begin(), maxe.end(), 0);
            std::fill(raw.begin(), raw.end(), 0);
            std::fill(sse.begin(), sse.end(), 0.0);
            out.assign(cap + 64, 0xA5);
            emu_launch((unsigned)ntiles, 1, tile, [&] {
                lz_code_tiles((unsigned long long)x.data(), dims, maxb, tpb, e, status.data(), &ticket,
                              base.data(), blen.data(), cap, out.data(), maxe.data(), sse.data(), raw.data());
            });
            for (size_t a = cap; a < cap + 64; a++)
                if (out[a] != 0xA5) return false;
            return true;
        };
        std::vector<unsigned char> out;
        std::vector<size_t> lens(nbk);
        size_t want_total = 0;
        for (auto& p : want) want_total += p.size();
        if (!code(want_total / 2, out)) {
            bad++;
            std::printf("case %d: LZ_CODE wrote past a short buffer\n", cases);
        }
        size_t total = 0;
        for (long long k = 0; k < nbk; k++) total += blen[k];
        if (total != want_total) {
            bad++;
            std::printf("case %d: LZ_CODE into a short buffer says %zu bytes, the CPU's %zu\n", cases, total,
                        want_total);
        }
        code(total, out);
        total = 0;
        for (long long k = 0; k < nbk; k++) {
            lens[k] = blen[k];
            if (base[k] != total) {
                bad++;
                std::printf("case %d brick %lld: starts at %llu, after %zu bytes\n", cases, k, base[k], total);
            }
            total += lens[k];
        }
        for (long long k = 0; k < nbk; k++) {
            bool same = lens[k] == want[k].size() &&
                        std::memcmp(out.data() + base[k], want[k].data(), lens[k]) == 0;
            if (!same) {
                bad++;
                std::printf("case %d brick %lld: %zu bytes, the CPU's %zu%s\n", cases, k, lens[k], want[k].size(),
                            lens[k] == want[k].size() ? " (contents differ)" : "");
            }
        }
        // Decoding the CPU's payloads.
        std::vector<unsigned char> pin;
        for (long long k = 0; k < nbk; k++) {
            base[k] = pin.size();
            pin.insert(pin.end(), want[k].begin(), want[k].end());
        }
        std::vector<unsigned> badk(nbk);
        emu_launch((unsigned)((nblocks + 255) / 256), 1, 256, [&] {
            lz_sizes(pin.data(), base.data(), dims, maxb, nblocks, sizes.data(), badk.data());
        });
        emu_launch((unsigned)nbk, 1, 1024, [&] { lz_scan(sizes.data(), maxb, offs.data(), tot.data()); });
        for (long long k = 0; k < nbk; k++)
            if (badk[k] || (nblk_k[k] + tot[k] + 3) / 4 * 4 != want[k].size()) {
                bad++;
                std::printf("case %d brick %lld: the decoder's heads disagree with its length\n", cases, k);
            }
        std::vector<float> y(n, -1.0f);
        unsigned g = (unsigned)std::min<long long>((nblocks + 255) / 256, 64);
        emu_launch(g, 1, 256, [&] {
            lz_unpack(pin.data(), base.data(), dims, maxb, nblocks, e, offs.data(), y.data());
        });
        long long wrong = 0;
        for (long long i = 0; i < n; i++) wrong += std::memcmp(&y[i], &yw[i], 4) != 0;
        if (wrong) {
            bad++;
            std::printf("case %d: %lld decoded values differ from the CPU's\n", cases, wrong);
        }
        // Blocks by their heads: raw, rate 0, 1-3 planes, more (LZ_UNPACK's paths).
        long long paths[4] = {0, 0, 0, 0};
        for (long long k = 0; k < nbk; k++)
            for (long long j = 0; j < nblk_k[k]; j++) {
                unsigned h = want[k][j], rate = h & 31;
                paths[h == 0xFF ? 0 : rate == 0 ? 1 : rate <= 3 ? 2 : 3]++;
            }
        std::printf("case %d: [%lld, %lld, %lld] in bricks of [%lld, %lld, %lld], %lld bricks, %zu bytes; "
                    "blocks raw %lld, rate 0 %lld, 1-3 %lld, more %lld\n", cases,
                    dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], nbk, total, paths[0], paths[1],
                    paths[2], paths[3]);
        cases++;
    }
    std::printf("%s: %d cases\n", bad ? "FAILED" : "ok", cases);
    return bad != 0;
}
