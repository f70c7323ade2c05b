// The peer's side of tools/device/cuszp_compare.sh: cuSZp (built from its
// public source on the device) on a float32 .npy field in device memory,
// with the same bounds multires gets. Times compress and decompress with
// CUDA events (the median of REPEAT runs after a warm-up), checks every
// decoded value against the bound and prints one line per mode and bound:
//
//   cuszp FIELD rel R mode M | ratio X | compress G GB/s | decompress G GB/s | max error / bound Y
//
// Build: nvcc -O3 -arch=sm_90 -I cuSZp/include cuSZp/src/*.cu cuszp_bench.cu
// Usage: cuszp_bench FIELD.npy NAME REPEAT REL [REL...]
#include <cuSZp.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                     \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

// A C-order little-endian float32 .npy: its shape and values.
static std::vector<float> read_npy(const char* path, std::vector<size_t>& shape) {
    FILE* f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    unsigned char magic[10];
    if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "%s: not an .npy\n", path); exit(1);
    }
    size_t hlen = magic[8] | (magic[9] << 8);
    if (magic[6] >= 2) {
        unsigned char more[2];
        if (fread(more, 1, 2, f) != 2) exit(1);
        hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
    }
    std::string h(hlen, ' ');
    if (fread(&h[0], 1, hlen, f) != hlen) exit(1);
    if (h.find("'<f4'") == std::string::npos || h.find("'fortran_order': False") == std::string::npos) {
        fprintf(stderr, "%s: expected a C-order <f4 array\n", path); exit(1);
    }
    size_t a = h.find('(') + 1, b = h.find(')');
    std::string dims = h.substr(a, b - a);
    size_t n = 1;
    for (size_t p = 0; p < dims.size();) {
        size_t q = dims.find(',', p);
        std::string t = dims.substr(p, q == std::string::npos ? std::string::npos : q - p);
        if (t.find_first_not_of(' ') != std::string::npos) { shape.push_back(std::stoul(t)); n *= shape.back(); }
        if (q == std::string::npos) break;
        p = q + 1;
    }
    std::vector<float> v(n);
    if (fread(v.data(), 4, n, f) != n) { fprintf(stderr, "%s: short\n", path); exit(1); }
    fclose(f);
    return v;
}

int main(int argc, char** argv) {
    if (argc < 5) { fprintf(stderr, "usage: %s FIELD.npy NAME REPEAT REL...\n", argv[0]); return 2; }
    std::vector<size_t> shape;
    std::vector<float> x = read_npy(argv[1], shape);
    const char* name = argv[2];
    int repeat = atoi(argv[3]);
    if (shape.size() != 3) { fprintf(stderr, "a 3-D field, please\n"); return 2; }
    size_t n = x.size();
    float lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
    // cuSZp's dims: x (fastest), y, z.
    uint3 dims = {(unsigned)shape[2], (unsigned)shape[1], (unsigned)shape[0]};
    float *d_x, *d_y;
    unsigned char* d_c;
    CK(cudaMalloc(&d_x, 4 * n));
    CK(cudaMalloc(&d_y, 4 * n));
    CK(cudaMalloc(&d_c, 4 * n + (1 << 20)));
    CK(cudaMemcpy(d_x, x.data(), 4 * n, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    std::vector<float> y(n);
    struct M { cuszp_mode_t m; const char* name; } modes[] = {
        {CUSZP_MODE_PLAIN, "plain"}, {CUSZP_MODE_OUTLIER, "outlier"}};
    for (int r = 4; r < argc; r++) {
        double rel = atof(argv[r]);
        float e = (float)(rel * (double)(hi - lo));
        for (auto& m : modes) {
            size_t bytes = 0;
            std::vector<float> tc, td;
            for (int k = 0; k < repeat + 1; k++) {
                CK(cudaEventRecord(t0, s));
                cuSZp_compress(d_x, d_c, n, &bytes, e, CUSZP_DIM_3D, dims, CUSZP_TYPE_FLOAT, m.m, s);
                CK(cudaEventRecord(t1, s));
                CK(cudaEventSynchronize(t1));
                float ms;
                CK(cudaEventElapsedTime(&ms, t0, t1));
                if (k) tc.push_back(ms);
                CK(cudaMemsetAsync(d_y, 0xff, 4 * n, s));  // NaN: a value never written shows
                CK(cudaEventRecord(t0, s));
                cuSZp_decompress(d_y, d_c, n, bytes, e, CUSZP_DIM_3D, dims, CUSZP_TYPE_FLOAT, m.m, s);
                CK(cudaEventRecord(t1, s));
                CK(cudaEventSynchronize(t1));
                CK(cudaEventElapsedTime(&ms, t0, t1));
                if (k) td.push_back(ms);
            }
            CK(cudaGetLastError());
            CK(cudaMemcpy(y.data(), d_y, 4 * n, cudaMemcpyDeviceToHost));
            double maxe = 0;
            size_t broken = 0;
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)y[i] - (double)x[i]);
                if (!(d <= e)) broken++;
                if (d > maxe || d != d) maxe = d != d ? INFINITY : d;
            }
            std::sort(tc.begin(), tc.end());
            std::sort(td.begin(), td.end());
            double gb = 4.0 * n / 1e9;
            printf("cuszp %s rel %g mode %s | ratio %.2f | compress %.1f GB/s | decompress %.1f GB/s | max error / bound %.3f%s\n",
                   name, rel, m.name, 4.0 * n / bytes, gb / (tc[tc.size() / 2] / 1e3),
                   gb / (td[td.size() / 2] / 1e3), maxe / e,
                   broken ? (" | BOUND BROKEN on " + std::to_string(broken) + " values").c_str() : "");
            fflush(stdout);
        }
    }
    return 0;
}
