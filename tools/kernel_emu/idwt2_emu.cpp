// IDWT2 (the fused 2-D synthesis level of dwt.cu) run on the CPU against
// two IDWT_AX axis passes, the path it replaces, over awkward shapes,
// filter lengths, shifts and both index rules (periodization and the
// others'): the same sums in the same order, so the same bits.
#include "emu.h"
#include <cstdio>
#include <random>
#include KERNEL_COMMON
#include KERNEL_DWT
IDWT_AX(k_idwt_ax, double)
IDWT2(k_idwt2, double)

// Runs `kernel` over (gx, gy, gz) blocks of (bx, by) threads.
static void launch2(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, const std::function<void()>& kernel) {
    gridDim = {gx, gy, gz};
    blockDim = {bx, by, 1};
    for (unsigned z = 0; z < gz; z++)
        for (unsigned y = 0; y < gy; y++)
            for (unsigned x = 0; x < gx; x++) {
                std::barrier<> bar((std::ptrdiff_t)(bx * by));
                emu_barrier = &bar;
                std::vector<std::thread> ts;
                for (unsigned t = 0; t < bx * by; t++)
                    ts.emplace_back([&, t] {
                        threadIdx = {t % bx, t / bx, 0};
                        blockIdx = {x, y, z};
                        kernel();
                        emu_barrier->arrive_and_drop();
                    });
                for (auto& t : ts) t.join();
            }
}

int main() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    int failures = 0, cases = 0;
    struct Case { long long outer, nc0, nc1; int F, shift, periodic; };
    const Case all[] = {{1, 5, 7, 2, 0, 1}, {2, 9, 4, 8, 3, 1}, {1, 6, 11, 4, 1, 0}, {3, 4, 5, 8, 6, 0}, {1, 33, 40, 6, 4, 0}};
    for (const Case& c : all) {
        // Output lengths as rec_len: 2 nc for periodization, 2 nc - F + 2 otherwise.
        const long long n0 = c.periodic ? 2 * c.nc0 : 2 * c.nc0 - c.F + 2;
        const long long n1 = c.periodic ? 2 * c.nc1 : 2 * c.nc1 - c.F + 2;
        if (n0 < 1 || n1 < 1) continue;
        const long long band = c.outer * c.nc0 * c.nc1;
        std::vector<double> aa(band), ad(band), da(band), dd(band), filt(2 * c.F);
        for (auto* v : {&aa, &ad, &da, &dd, &filt})
            for (double& x : *v) x = u(rng);
        // The axis passes: axis 1 on (aa, ad) and (da, dd), then axis 0.
        std::vector<double> ta(c.outer * c.nc0 * n1), td(ta.size()), want(c.outer * n0 * n1), got(want.size(), NAN);
        const unsigned g1 = (unsigned)((n1 + 31) / 32);
        for (long long r = 0; r < c.outer * c.nc0; r++) {
            launch2(1, 1, 1, 1, 8, [&] {
                k_idwt_ax(aa.data() + r * c.nc1, ad.data() + r * c.nc1, c.nc1, 1, n1, c.shift, c.periodic, filt.data(), c.F, ta.data() + r * n1);
            });
            launch2(1, 1, 1, 1, 8, [&] {
                k_idwt_ax(da.data() + r * c.nc1, dd.data() + r * c.nc1, c.nc1, 1, n1, c.shift, c.periodic, filt.data(), c.F, td.data() + r * n1);
            });
        }
        launch2(g1, 2, (unsigned)c.outer, 32, 8, [&] {
            k_idwt_ax(ta.data(), td.data(), c.nc0, n1, n0, c.shift, c.periodic, filt.data(), c.F, want.data());
        });
        launch2(g1, 2, (unsigned)c.outer, 32, 8, [&] {
            k_idwt2(aa.data(), ad.data(), da.data(), dd.data(), c.nc0, c.nc1, n0, n1, c.shift, c.periodic, filt.data(), c.F, got.data());
        });
        cases++;
        long long bad = 0;
        for (size_t i = 0; i < want.size(); i++) bad += !(got[i] == want[i]);
        if (bad) {
            failures++;
            std::printf("outer %lld, %lld x %lld, F %d, shift %d, periodic %d: %lld of %zu values differ\n", c.outer, c.nc0, c.nc1, c.F, c.shift, c.periodic, bad, want.size());
        }
    }
    std::printf("IDWT2 against two IDWT_AX passes: %d of %d cases equal bit for bit\n", cases - failures, cases);
    return failures ? 1 : 0;
}
