/* libFuzzer target: any bytes as a model's config.json, read by the example engine's reader
 * (examples/engine/config.c). A config it accepts must hold what the engine relies on. */
#include "config.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[256], err[512] = "";
    fuzz_write("config.json", data, size, path, sizeof path);
    model_config c;
    if (model_config_load(path, &c, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        return 0;
    }
    if (c.hidden < 1 || c.intermediate < 1 || c.layers < 1 || c.layers > 65536 || c.heads < 1 ||
        c.kv_heads < 1 || c.heads % c.kv_heads || c.head_dim < 2 || c.head_dim % 2 ||
        c.vocab < 1 || model_q_dim(&c) > INT32_MAX || !(c.rms_eps > 0) || !(c.rope_theta > 0) ||
        memchr(c.name_or_path, '\0', sizeof c.name_or_path) == NULL)
        abort();
    return 0;
}
