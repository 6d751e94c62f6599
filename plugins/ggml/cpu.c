/* ggml's CPU backend, which computes every node GEMM_RVV does not: found through ggml's
 * registry (libggml-cpu is loaded by ggml, never linked into the plugin). */
#include "plugin.h"

ggml_backend_dev_t grg_cpu_device(void)
{
    return ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
}

void grg_cpu_set_threads(ggml_backend_t cpu, int threads)
{
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(cpu));
    ggml_backend_set_n_threads_t set =
        (ggml_backend_set_n_threads_t)ggml_backend_reg_get_proc_address(
            reg, "ggml_backend_set_n_threads");
    if (set)
        set(cpu, threads);
}

ggml_backend_t grg_cpu_backend_new(int threads)
{
    ggml_backend_dev_t dev = grg_cpu_device();
    ggml_backend_t cpu = dev ? ggml_backend_dev_init(dev, NULL) : NULL;
    if (!cpu) {
        grg_log(GGML_LOG_LEVEL_ERROR, "%s: ggml's CPU backend cannot be started\n", GRG_NAME);
        return NULL;
    }
    grg_cpu_set_threads(cpu, threads);
    return cpu;
}
