// Does one process's CUDA driver slow threads that drive two GPUs? The
// two-GPU decode loses about 1.3 ms inside its process that two processes
// in step do not (sessions 43 and 57), and its 23 slot threads share one
// driver. Each thread here binds a GPU's primary context, makes its own
// stream and repeats one driver call; the rate a thread gets, alone on a
// GPU's threads or beside a second GPU's, says whether the driver is
// shared. Build and run on the device (no Rust there):
//
//   nvcc -O2 -o /tmp/launch_rate tools/device/launch_rate.cu -lcuda
//   /tmp/launch_rate
//
// Prints, per call kind (a launch of an empty kernel; an event made,
// recorded, waited on by the stream and destroyed, as cudarc's `join`
// does; an async 4 KiB copy up from pinned memory) and per layout (GPUs x
// threads a GPU), the calls a second per thread and in all.
#include "driver_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static const char* PTX =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry empty() { ret; }\n";

enum Kind { LAUNCH, EVENT, COPY };
static const char* NAMES[] = {"launch", "event join", "4 KiB copy up"};

struct Gpu {
    CUcontext ctx;
    CUfunction f;
};

// Calls a second per thread (median thread) and in all, for `gpus` GPUs
// with `per` threads each, every thread making `n` calls of `kind`.
static void run(std::vector<Gpu>& all, int gpus, int per, int n, Kind kind) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<double> secs(gpus * per);
    std::vector<std::thread> ts;
    for (int g = 0; g < gpus; g++) {
        for (int t = 0; t < per; t++) {
            ts.emplace_back([&, g, t] {
                CK(cuCtxSetCurrent(all[g].ctx));
                CUstream s;
                CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
                void* host = nullptr;
                CUdeviceptr dev = 0;
                if (kind == COPY) {
                    CK(cuMemAllocHost(&host, 4096));
                    CK(cuMemAlloc(&dev, 4096));
                }
                ready++;
                while (!go.load()) {
                }
                auto t0 = std::chrono::steady_clock::now();
                for (int i = 0; i < n; i++) {
                    if (kind == LAUNCH) {
                        CK(cuLaunchKernel(all[g].f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr));
                    } else if (kind == EVENT) {
                        CUevent e;
                        CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
                        CK(cuEventRecord(e, s));
                        CK(cuStreamWaitEvent(s, e, 0));
                        CK(cuEventDestroy(e));
                    } else {
                        CK(cuMemcpyHtoDAsync(dev, host, 4096, s));
                    }
                }
                CK(cuStreamSynchronize(s));
                secs[g * per + t] =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (kind == COPY) {
                    CK(cuMemFreeHost(host));
                    CK(cuMemFree(dev));
                }
                CK(cuStreamDestroy(s));
            });
        }
    }
    while (ready.load() < gpus * per) {
    }
    auto t0 = std::chrono::steady_clock::now();
    go = true;
    for (auto& t : ts) t.join();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> s = secs;
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    std::printf("%-14s %d GPU(s) x %2d threads: %8.0f calls/s a thread (median), %9.0f in all\n",
                NAMES[kind], gpus, per, n / s[s.size() / 2], gpus * per * (double)n / wall);
}

int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    CK(cuInit(0));
    int count = 0;
    CK(cuDeviceGetCount(&count));
    std::vector<Gpu> all(count);
    for (int g = 0; g < count; g++) {
        CUdevice d;
        CK(cuDeviceGet(&d, g));
        CK(cuDevicePrimaryCtxRetain(&all[g].ctx, d));
        CK(cuCtxSetCurrent(all[g].ctx));
        CUmodule m;
        CK(cuModuleLoadData(&m, PTX));
        CK(cuModuleGetFunction(&all[g].f, m, "empty"));
    }
    std::printf("%d GPU(s), %d calls a thread\n", count, n);
    for (Kind k : {LAUNCH, EVENT, COPY}) {
        // One GPU's 13 threads (a decode's slots), the same thread count
        // twice on one GPU, then 13 on each of two GPUs.
        run(all, 1, 13, n, k);
        run(all, 1, 26, n, k);
        if (count > 1) run(all, 2, 13, n, k);
    }
    return 0;
}
