/* A stand-in for libgemm_rvv.so of another version: the Python package must refuse to load it
 * (tests/torch/run.sh). */
const char *gemm_rvv_version(void);

const char *gemm_rvv_version(void)
{
    return "0.0.1";
}
