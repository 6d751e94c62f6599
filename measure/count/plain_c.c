/* What a user gets without gemm_rvv: the textbook triple loop, left to GCC's autovectorizer.
 * Compiled twice by the Makefile, as PLAIN_C_NAME, with -O3 -ffast-math and
 * -march=rv64gcv_zvl256b (for VLEN 256 runs) or -march=rv64gcv (VLEN 128: a zvl256b binary
 * would be wrong there). */
#include <stdint.h>
#include <string.h>

void PLAIN_C_NAME(const uint16_t *x, const uint16_t *w, float *y, int m, int n, int k);

static float widen(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void PLAIN_C_NAME(const uint16_t *x, const uint16_t *w, float *y, int m, int n, int k)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int l = 0; l < k; l++)
                acc += widen(x[i * k + l]) * widen(w[j * k + l]);
            y[i * n + j] = acc;
        }
}
