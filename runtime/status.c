#include "gemm_rvv.h"

const char *gemm_rvv_strerror(gemm_rvv_status status)
{
    switch (status) {
    case GEMM_RVV_OK: return "success";
    case GEMM_RVV_ERR_NULL: return "a required pointer is NULL";
    case GEMM_RVV_ERR_SIZE:
        return "M, N or K is zero or negative (attention: a size below 1, or a head dim or "
               "head count the call does not take)";
    case GEMM_RVV_ERR_STRIDE:
        return "a row stride is smaller than its row (attention: a negative stride, a mask row "
               "shorter than n_kv, or outputs that share elements)";
    case GEMM_RVV_ERR_OVERFLOW: return "a size does not fit the address space";
    case GEMM_RVV_ERR_TYPE:
        return "unknown output type (attention: a cache type other than F16 or BF16)";
    case GEMM_RVV_ERR_NOMEM: return "out of memory";
    case GEMM_RVV_ERR_THREADS:
        return "a worker thread could not be started, or a weight object's lock taken";
    case GEMM_RVV_ERR_ISA:
        return "GEMM_RVV_ISA asks for a kernel variant this core lacks (or names none: "
               "base, zvfbfwma or auto)";
    case GEMM_RVV_ERR_ALIAS:
        return "Y overlaps X, W or the bias (attention: out overlaps q, k, v or the mask)";
    case GEMM_RVV_ERR_BUFFER:
        return "the caller's memory is too small or not aligned to GEMM_RVV_WEIGHT_ALIGN";
    case GEMM_RVV_ERR_RANGE: return "elements past the end of the weight";
    case GEMM_RVV_ERR_FORMAT:
        return "the weight's format (BF16 or Q8_0) is not one this call takes, or K is not a "
               "multiple of 32 for Q8_0 (attention: sinks, not supported yet)";
    case GEMM_RVV_ERR_BUSY:
        return "the weight object is in use: a call, read, write or update runs on it";
    }
    return "unknown status";
}

const char *gemm_rvv_version(void)
{
    return GEMM_RVV_VERSION_STRING;
}
