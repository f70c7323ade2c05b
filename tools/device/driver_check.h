// CK(call): a CUDA driver call that must succeed, or the program prints
// where and why and exits 1. Shared by the driver-API probes in this
// folder (launch_rate.cu, portable_rate.cu).
#pragma once
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                  \
    do {                                                                       \
        CUresult r_ = (x);                                                     \
        if (r_ != CUDA_SUCCESS) {                                              \
            const char* s_ = nullptr;                                          \
            cuGetErrorString(r_, &s_);                                         \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,     \
                         s_ ? s_ : "?");                                       \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)
