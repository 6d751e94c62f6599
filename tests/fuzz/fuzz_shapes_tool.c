/* libFuzzer target: any bytes as the config.json gemm-rvv-shapes reads (examples/engine/
 * shapes.c, its main built as gemm_rvv_shapes_main). A shapes file it writes must read back
 * through the generator's reader with nothing injected: the model named as the config says,
 * the default gate and target, the eight Linears. */
#include <jansson.h>

#include "fuzz_file.h"
#include "shapes.h"

int gemm_rvv_shapes_main(int argc, char **argv);

/* The model name the tool takes from the config: the last part of "_name_or_path". */
static char *expected_model(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    const char *name = json_string_value(json_object_get(root, "_name_or_path"));
    char *copy = NULL;
    if (name && strlen(name) < 256) {
        const char *slash = strrchr(name, '/');
        copy = strdup(slash ? slash + 1 : name);
    }
    json_decref(root);
    return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    char config[256], out[256];
    fuzz_write("config.json", data, size, config, sizeof config);
    snprintf(out, sizeof out, "%s/shapes.yaml", fuzz_dir());
    char *argv[] = {"gemm-rvv-shapes", "--batch", "1,4", "--prefill", "16", "-o", out, config,
                    NULL};
    fflush(stderr);
    if (gemm_rvv_shapes_main(8, argv) != 0)
        return 0;
    struct diag d = {"shapes.yaml", sink, 0};
    struct shapes s;
    if (shapes_read_file(out, &d, &s) != 0)
        abort(); /* the tool wrote a file the generator rejects */
    char *model = expected_model(data, size);
    struct gate g = gate_default();
    if (s.count != 8 || (model && model[0] && (!s.model || strcmp(s.model, model) != 0)) ||
        s.gate_set[0] || s.gate_set[1] || s.gate_set[2] || s.gate_set[3] || s.buckets_set ||
        s.gate.max_m != g.max_m || s.target.vlen != target_default().vlen)
        abort(); /* something was injected, or the name did not survive */
    free(model);
    shapes_free(&s);
    return 0;
}
