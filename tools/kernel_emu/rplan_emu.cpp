// Runs RPLAN, RPIECES and RWORDS (codec_rans.cu) on the CPU over the cases
// rans.rs's write_rplan_cases wrote, and compares every output with the
// host's plan. Built and run by rplan_check.sh.
#include "emu.h"
#include <cstdio>
#include <cstring>
#include <string>
// The kernel files, as NVRTC gets them (rplan_check.sh passes their paths).
#include KERNEL_COMMON
#include KERNEL_CODEC
RPLAN(k_rplan)
RPIECES(k_rpieces)
RWORDS(k_rwords)

static const unsigned char* at;
template <typename T> static std::vector<T> take(size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), at, n * sizeof(T));
    at += n * sizeof(T);
    return v;
}

int main(int argc, char** argv) {
    FILE* f = std::fopen(argv[1], "rb");
    if (!f) return 2;
    std::vector<unsigned char> bytes;
    unsigned char buf[1 << 16];
    size_t k;
    while ((k = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + k);
    at = bytes.data();
    const size_t T = R_NCTX * R_NSYM, CUM = R_NCTX * (R_NSYM + 1);
    long long groups = (long long)take<unsigned long long>(1)[0];
    auto lg = take<double>(32769);
    int bad = 0, checked = 0;
    for (long long g = 0; g < groups; g++) {
        auto hd = take<unsigned long long>(6);
        long long n = hd[0], nblk = hd[1];
        unsigned most = hd[2], floor_ = hd[3];
        long long most_pieces = hd[4], wide = hd[5];
        double dense = take<double>(1)[0], long_chain = take<double>(1)[0];
        auto blocks = take<unsigned>(nblk * 8);
        const int nbk = 3;
        std::vector<unsigned> hist(nbk * T);
        std::vector<std::vector<unsigned>> ecum(nbk), escale(nbk), emeta(nbk), ewords(nbk);
        for (int b = 0; b < nbk; b++) {
            auto h = take<unsigned>(T);
            std::copy(h.begin(), h.end(), hist.begin() + b * T);
            ecum[b] = take<unsigned>(CUM);
            escale[b] = take<unsigned>(R_NCTX);
            emeta[b] = take<unsigned>(5);
            ewords[b] = take<unsigned>(emeta[b][4]);
        }
        std::vector<double> scr(nbk * (T * 2 + nblk));
        std::vector<unsigned> cum(nbk * CUM), scale(nbk * R_NCTX), meta(nbk * R_META);
        emu_launch(1, nbk, 32, [&] {
            k_rplan(hist.data(), blocks.data(), nblk, n, lg.data(), most, floor_, dense, most_pieces,
                    long_chain, wide, scr.data(), cum.data(), scale.data(), meta.data());
        });
        long long maxp = r_nchunks(n, floor_) + most_pieces + wide;
        std::vector<unsigned> cfirst(nbk + 1), clen(nbk * maxp);
        std::vector<unsigned long long> cstart(nbk * maxp);
        emu_launch(1, nbk, 1, [&] { k_rpieces(meta.data(), nbk, n, cfirst.data(), cstart.data(), clen.data()); });
        std::vector<unsigned> words(nbk * 8192);
        emu_launch(1, nbk, 32, [&] { k_rwords(hist.data(), scr.data(), nblk, scale.data(), meta.data(), words.data()); });
        unsigned cf = 0, wf = 0;
        for (int b = 0; b < nbk; b++) {
            checked++;
            std::string why;
            const unsigned* m = &meta[b * R_META];
            if (std::memcmp(&cum[b * CUM], ecum[b].data(), CUM * 4)) why += " cum";
            if (std::memcmp(&scale[b * R_NCTX], escale[b].data(), R_NCTX * 4)) why += " scale";
            for (int i = 0; i < 5; i++)
                if (m[i] != emeta[b][i]) why += " meta[" + std::to_string(i) + "] " + std::to_string(m[i]) + " vs " + std::to_string(emeta[b][i]);
            if (m[5] != cf || m[6] != wf || cfirst[b] != cf) why += " firsts";
            if (why.empty() && std::memcmp(&words[wf], ewords[b].data(), ewords[b].size() * 4)) why += " words";
            // The pieces, as rans::pieces gives them.
            long long len = 1ll << m[0], nc = r_nchunks(n, m[0]);
            unsigned c = cf;
            for (long long j = 0; j < nc && why.empty(); j++) {
                long long a = j * len, z = std::min(a + len, n), step = j < (long long)m[1] ? len >> m[2] : len;
                for (long long p = a; p < z; p += step, c++)
                    if (cstart[c] != (unsigned long long)p || clen[c] != (unsigned)std::min(step, z - p)) {
                        why += " pieces";
                        break;
                    }
            }
            if (why.empty() && c != cf + m[3]) why += " piece count";
            if (!why.empty()) {
                bad++;
                std::printf("group %lld brick %d (n %lld, most %u):%s\n", g, b, n, most, why.c_str());
            }
            cf += m[3];
            wf += m[4];
        }
        if (cfirst[nbk] != cf) {
            bad++;
            std::printf("group %lld: cfirst[nbk] %u vs %u\n", g, cfirst[nbk], cf);
        }
    }
    std::printf("%d of %d bricks planned as the host plans them\n", checked - bad, checked);
    return bad ? 1 : 0;
}
