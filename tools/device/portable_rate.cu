// Does a GPU copy more slowly from host memory that another GPU's context
// page-locked? The bench's file (`PinnedBytes`) is registered PORTABLE by
// GPU 0's context, and in the two-GPU decode GPU 1's streams reached its
// device at 8.0-13.6 ms where GPU 0's did at 7.6-7.9 (session 57). This
// registers a 640 MB buffer as `Registered` does (touched, then
// cuMemHostRegister), and times 320 MB going up to each GPU in 8 MB
// copies over 13 streams (a decode's batches), one GPU alone and both at
// once, with the buffer registered by GPU 0's context (PORTABLE), by GPU
// 1's (PORTABLE), and by GPU 0's without PORTABLE. Build and run on the
// device (no Rust there):
//
//   nvcc -O2 -o /tmp/portable_rate tools/device/portable_rate.cu -lcuda
//   /tmp/portable_rate
#include "driver_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

static const size_t HALF = 320ull << 20;
static const size_t PIECE = 8ull << 20;
static const int STREAMS = 13;

struct Gpu {
    CUcontext ctx;
    CUdeviceptr dev;
    std::vector<CUstream> s;
};

// Seconds for GPU g to copy its half of `host` up, pieces round-robin
// over its streams.
static double up(Gpu& g, const unsigned char* host) {
    CK(cuCtxSetCurrent(g.ctx));
    auto t0 = std::chrono::steady_clock::now();
    for (size_t o = 0, k = 0; o < HALF; o += PIECE, k++) {
        CK(cuMemcpyHtoDAsync(g.dev + o, host + o, PIECE, g.s[k % STREAMS]));
    }
    for (auto s : g.s) CK(cuStreamSynchronize(s));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

// Five runs of GPU 0 alone, GPU 1 alone and both at once; GB/s a GPU.
static void rates(std::vector<Gpu>& all, unsigned char* host, const char* how) {
    std::vector<double> a0, a1, b0, b1;
    for (int r = 0; r < 6; r++) {
        double t0 = up(all[0], host);
        double t1 = up(all[1], host + HALF);
        double s0 = 0, s1 = 0;
        std::thread x([&] { s0 = up(all[0], host); });
        std::thread y([&] { s1 = up(all[1], host + HALF); });
        x.join();
        y.join();
        if (r == 0) continue;
        a0.push_back(t0);
        a1.push_back(t1);
        b0.push_back(s0);
        b1.push_back(s1);
    }
    auto gb = [](double s) { return HALF / s / 1e9; };
    std::printf("%-34s alone: gpu0 %5.1f gpu1 %5.1f GB/s | both: gpu0 %5.1f gpu1 %5.1f GB/s\n", how,
                gb(median(a0)), gb(median(a1)), gb(median(b0)), gb(median(b1)));
}

int main() {
    CK(cuInit(0));
    int count = 0;
    CK(cuDeviceGetCount(&count));
    if (count < 2) {
        std::printf("needs two GPUs, found %d\n", count);
        return 1;
    }
    std::vector<Gpu> all(2);
    for (int g = 0; g < 2; g++) {
        CUdevice d;
        CK(cuDeviceGet(&d, g));
        CK(cuDevicePrimaryCtxRetain(&all[g].ctx, d));
        CK(cuCtxSetCurrent(all[g].ctx));
        CK(cuMemAlloc(&all[g].dev, HALF));
        all[g].s.resize(STREAMS);
        for (auto& s : all[g].s) CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    }
    size_t len = 2 * HALF;
    unsigned char* host = (unsigned char*)std::aligned_alloc(4096, len);
    std::memset(host, 1, len);
    struct Way {
        int ctx;
        unsigned flags;
        const char* name;
    } ways[] = {{0, CU_MEMHOSTREGISTER_PORTABLE, "registered by gpu0, PORTABLE"},
                {1, CU_MEMHOSTREGISTER_PORTABLE, "registered by gpu1, PORTABLE"},
                {0, CU_MEMHOSTREGISTER_PORTABLE, "registered by gpu0, PORTABLE again"},
                {0, 0, "registered by gpu0, not PORTABLE"}};
    for (auto& w : ways) {
        CK(cuCtxSetCurrent(all[w.ctx].ctx));
        CK(cuMemHostRegister(host, len, w.flags));
        rates(all, host, w.name);
        CK(cuCtxSetCurrent(all[w.ctx].ctx));
        CK(cuMemHostUnregister(host));
    }
    unsigned char* alloc = nullptr;
    CK(cuCtxSetCurrent(all[0].ctx));
    CK(cuMemHostAlloc((void**)&alloc, len, CU_MEMHOSTALLOC_PORTABLE));
    std::memset(alloc, 1, len);
    rates(all, alloc, "cuMemHostAlloc by gpu0, PORTABLE");
    return 0;
}
