/* GET_ROWS on a packed weight: the rows read back out of the weight object, in ggml's layout of
 * its format, and converted to FP32 as ggml's CPU backend converts them. So a tied embedding
 * (llama.cpp's token_embd.weight, both the lm_head and the table of the token embeddings) lives
 * once, packed, in GEMM_RVV's buffer, and the embeddings are the file's bits as without it. */
#include <stdlib.h>

#include "plugin.h"

bool grg_serves_get_rows(const struct ggml_tensor *op)
{
    const struct ggml_tensor *w = op->src[0], *idx = op->src[1];
    if (op->op != GGML_OP_GET_ROWS || !w || !idx || w->view_src || !grg_packs(w))
        return false;
    /* placed and packed, or packed once placed (llama.cpp asks before it places weights) */
    bool packed = w->data ? grg_packed_whole(w) != NULL : grg_reads_packed(w) || !w->buffer;
    return packed && idx->type == GGML_TYPE_I32 && idx->ne[1] == 1 && idx->ne[2] == 1 &&
           idx->ne[3] == 1 && op->type == GGML_TYPE_F32 && op->nb[0] == sizeof(float) &&
           op->ne[0] == w->ne[0] && op->ne[1] == idx->ne[0];
}

enum ggml_status grg_get_rows(struct ggml_tensor *dst)
{
    const struct ggml_tensor *w = dst->src[0], *idx = dst->src[1];
    struct grg_packed *p = grg_packed_whole(w);
    if (!p)
        return GGML_STATUS_FAILED;
    size_t units = (size_t)(p->k / p->fmt->unit_elems);
    unsigned char *row = malloc(units * p->fmt->unit_bytes);
    if (!row)
        return GGML_STATUS_ALLOC_FAILED;
    enum ggml_status st = GGML_STATUS_SUCCESS;
    for (int64_t i = 0; i < idx->ne[0] && st == GGML_STATUS_SUCCESS; i++) {
        int32_t r = *(const int32_t *)((const char *)idx->data + i * idx->nb[0]);
        gemm_rvv_status s = r >= 0 && r < p->n
                                ? p->fmt->read(p->weight, row, (size_t)r * units, units)
                                : GEMM_RVV_ERR_RANGE;
        if (s != GEMM_RVV_OK) {
            grg_log(GGML_LOG_LEVEL_ERROR, "%s: GET_ROWS of row %d of %s (%lld rows): %s\n",
                    GRG_NAME, (int)r, w->name, (long long)p->n, gemm_rvv_strerror(s));
            st = GGML_STATUS_FAILED;
            break;
        }
        p->fmt->to_f32(row, units, (float *)((char *)dst->data + i * dst->nb[1]));
    }
    free(row);
    return st;
}
