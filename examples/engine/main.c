/* gemm-rvv-engine: a small inference engine for decoder-only models on gemm_rvv, token ids in
 * and out. It loads a Hugging Face model folder, packs every Linear once, runs the prompt as
 * one prefill (M = prompt length) and then greedy decode (M = 1).
 *
 *   gemm-rvv-engine MODEL_DIR --prompt 1,2,3 --steps N [--threads T] [--kv-cache f16|bf16]
 *                   [--logits FILE]
 *
 * The KV cache holds F16 (the default, as llama.cpp's) or BF16 elements; attention runs on it
 * in the library (gemm_rvv_attention).
 *
 * stdout: "tokens: ..." (the generated ids), prefill and decode speed, the weight bytes read
 * per token, and the library's table of which shapes ran on kernels. --logits writes the FP32
 * logits of each generated token (steps x vocabulary values) for comparison with a reference.
 * Exit status: 0 success, 1 bad model or failure, 2 bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gemm_rvv.h>

#include "config.h"
#include "model.h"
#include "weights.h"

static const char *program = "gemm-rvv-engine";

typedef struct options {
    const char *model_dir, *logits_path;
    int32_t *prompt;
    int64_t prompt_len, steps;
    int threads;
    gemm_rvv_type cache_type;
} options;

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "%s: %s\n", program, why);
    fprintf(stderr, "usage: %s MODEL_DIR --prompt ID,ID,... --steps N [--threads T] "
                    "[--kv-cache f16|bf16] [--logits FILE]\n", program);
    return 2;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A whole positive number, or -1. */
static long long whole(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return end == text || *end || errno || v < 0 ? -1 : v;
}

static int parse_prompt(const char *text, options *o)
{
    size_t count = 1;
    for (const char *p = text; *p; p++)
        count += *p == ',';
    o->prompt = malloc(count * sizeof *o->prompt);
    if (!o->prompt)
        return 1;
    o->prompt_len = 0;
    for (const char *p = text;; p++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > INT32_MAX || (*end && *end != ','))
            return 1;
        o->prompt[o->prompt_len++] = (int32_t)v;
        if (!*end)
            return 0;
        p = end;
    }
}

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){.steps = -1, .threads = 0, .cache_type = GEMM_RVV_F16};
    const char *prompt = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--prompt") && value) {
            prompt = value, i++;
        } else if (!strcmp(a, "--steps") && value) {
            o->steps = whole(value), i++;
        } else if (!strcmp(a, "--threads") && value) {
            long long t = whole(value);
            o->threads = t > 0 && t <= 1024 ? (int)t : -1, i++;
        } else if (!strcmp(a, "--kv-cache") && value) {
            if (strcmp(value, "f16") && strcmp(value, "bf16"))
                return usage("--kv-cache takes f16 or bf16");
            o->cache_type = strcmp(value, "f16") ? GEMM_RVV_BF16 : GEMM_RVV_F16, i++;
        } else if (!strcmp(a, "--logits") && value) {
            o->logits_path = value, i++;
        } else if (a[0] != '-' && !o->model_dir) {
            o->model_dir = a;
        } else {
            char why[300];
            snprintf(why, sizeof why, "unexpected argument \"%s\"%s", a,
                     a[0] == '-' && !value ? " (or its value is missing)" : "");
            return usage(why);
        }
    }
    if (!o->model_dir)
        return usage("no model folder given");
    if (!prompt || parse_prompt(prompt, o))
        return usage("--prompt takes token ids separated by commas, such as 1,2,3");
    if (o->steps < 1 || o->steps > 1000000)
        return usage("--steps takes a number of tokens to generate, at least 1");
    if (o->threads < 0)
        return usage("--threads takes a positive number");
    return 0;
}

static int32_t argmax(const float *v, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return (int32_t)best;
}

/* Checks what the configuration allows before memory is spent on the weights. */
static int check_request(const model_config *c, const options *o)
{
    for (int64_t i = 0; i < o->prompt_len; i++)
        if (o->prompt[i] >= c->vocab) {
            fprintf(stderr, "%s: error: prompt token %d is outside the vocabulary of %lld\n",
                    program, o->prompt[i], (long long)c->vocab);
            return 1;
        }
    int64_t context = o->prompt_len + o->steps;
    if (c->sliding_window && context > c->sliding_window) {
        fprintf(stderr, "%s: error: %lld positions exceed the sliding window of %lld, which this "
                        "engine does not implement\n", program, (long long)context,
                (long long)c->sliding_window);
        return 1;
    }
    return 0;
}

/* Prefill, then steps - 1 decode calls: one generated token each, greedy. */
static int generate(const model_config *c, const model_weights *w, const options *o, FILE *logits_out,
                    int32_t *generated, double *prefill_s, double *decode_s)
{
    engine_state s;
    float *logits = malloc((size_t)c->vocab * sizeof *logits);
    if (!logits || engine_state_init(&s, c, o->prompt_len + o->steps, o->prompt_len, o->cache_type)) {
        fprintf(stderr, "%s: error: out of memory for the KV cache and buffers\n", program);
        free(logits);
        return 1;
    }
    char err[512];
    int failed = 0;
    double t0 = now();
    for (int64_t step = 0; step < o->steps && !failed; step++) {
        const int32_t *in = step ? &generated[step - 1] : o->prompt;
        int64_t m = step ? 1 : o->prompt_len, pos = step ? o->prompt_len + step - 1 : 0;
        failed = engine_forward(c, w, &s, in, m, pos, logits, err, sizeof err);
        if (!failed) {
            generated[step] = argmax(logits, c->vocab);
            if (logits_out && fwrite(logits, sizeof *logits, (size_t)c->vocab, logits_out) !=
                                  (size_t)c->vocab) {
                snprintf(err, sizeof err, "cannot write %s: %s", o->logits_path, strerror(errno));
                failed = 1;
            }
        }
        if (step == 0)
            *prefill_s = now() - t0;
    }
    *decode_s = now() - t0 - *prefill_s;
    if (failed)
        fprintf(stderr, "%s: error: %s\n", program, err);
    engine_state_free(&s);
    free(logits);
    return failed;
}

static void report(const model_config *c, const model_weights *w, const options *o,
                   const int32_t *generated, double prefill_s, double decode_s)
{
    printf("tokens:");
    for (int64_t i = 0; i < o->steps; i++)
        printf(" %d", generated[i]);
    printf("\n");
    printf("prefill: %lld tokens in %.3f s, %.2f tok/s\n", (long long)o->prompt_len, prefill_s,
           (double)o->prompt_len / prefill_s);
    if (o->steps > 1)
        printf("decode: %lld tokens in %.3f s, %.2f tok/s\n", (long long)(o->steps - 1), decode_s,
               (double)(o->steps - 1) / decode_s);
    printf("weight bytes read per token: %llu (%.1f MiB, BF16 Linears of %lld layers and the lm_head)\n",
           (unsigned long long)w->linear_bytes, (double)w->linear_bytes / 1048576.0,
           (long long)c->layers);
    /* the last token's attention read K and V of every position before it and its own */
    int64_t positions = o->prompt_len + o->steps - 1;
    unsigned long long cache_bytes =
        2ull * (unsigned long long)(c->layers * positions * model_kv_dim(c)) * 2u;
    printf("KV cache bytes read by the last token: %llu (%.1f MiB, %s, %lld positions)\n",
           cache_bytes, (double)cache_bytes / 1048576.0,
           o->cache_type == GEMM_RVV_F16 ? "F16" : "BF16", (long long)positions);
    printf("gemm_rvv %s, kernels %s, %d threads:\n", gemm_rvv_version(),
           gemm_rvv_kernels_active() ? "active" : "off (fallback only)", gemm_rvv_get_threads());
    gemm_rvv_counters_print(stdout);
}

/* Loads the model and runs the request; the caller frees what parse_args allocated. */
static int run(const options *o)
{
    int rc;
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/config.json", o->model_dir);
    model_config c;
    if (model_config_load(path, &c, err, sizeof err)) {
        fprintf(stderr, "%s: error: %s\n", program, err);
        return 1;
    }
    if (check_request(&c, o))
        return 1;
    if (o->threads && gemm_rvv_set_threads(o->threads) != GEMM_RVV_OK)
        fprintf(stderr, "%s: warning: not all %d threads could be started\n", program, o->threads);
    double t0 = now();
    model_weights w;
    if (weights_load(&w, &c, o->model_dir, err, sizeof err)) {
        fprintf(stderr, "%s: error: %s\n", program, err);
        return 1;
    }
    if (w.rounded_f16 || w.rounded_f32)
        fprintf(stderr, "%s: rounded to BF16 at load: %d F16 and %d F32 tensors\n", program,
                w.rounded_f16, w.rounded_f32);
    fprintf(stderr, "%s: %s, %lld layers, hidden %lld, vocabulary %lld: loaded and packed in %.2f s\n",
            program, c.arch_name, (long long)c.layers, (long long)c.hidden, (long long)c.vocab,
            now() - t0);

    FILE *logits_out = NULL;
    if (o->logits_path && !(logits_out = fopen(o->logits_path, "wb"))) {
        fprintf(stderr, "%s: error: cannot write %s: %s\n", program, o->logits_path, strerror(errno));
        weights_free(&w, &c);
        return 1;
    }
    int32_t *generated = malloc((size_t)o->steps * sizeof *generated);
    double prefill_s = 0, decode_s = 0;
    gemm_rvv_counters_reset();
    rc = !generated || generate(&c, &w, o, logits_out, generated, &prefill_s, &decode_s);
    if (logits_out && fclose(logits_out) && !rc) {
        fprintf(stderr, "%s: error: cannot write %s\n", program, o->logits_path);
        rc = 1;
    }
    if (!rc)
        report(&c, &w, o, generated, prefill_s, decode_s);
    free(generated);
    weights_free(&w, &c);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (!rc)
        rc = run(&o);
    free(o.prompt);
    return rc;
}
