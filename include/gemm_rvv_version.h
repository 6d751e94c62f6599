/* The version of gemm_rvv, shared by the library and its generator. */
#ifndef GEMM_RVV_VERSION_H
#define GEMM_RVV_VERSION_H

#define GEMM_RVV_VERSION_MAJOR 0
#define GEMM_RVV_VERSION_MINOR 1
#define GEMM_RVV_VERSION_PATCH 0
#define GEMM_RVV_VERSION_STRING "0.1.0"

#endif
