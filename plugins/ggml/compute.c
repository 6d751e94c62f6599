/* A GEMM_RVV backend's graphs: the nodes in the graph's order, each product GEMM_RVV serves,
 * each GET_ROWS of a packed weight, each attention (FLASH_ATTN_EXT, or llama.cpp's chain
 * without it, its three nodes as one) run here, every run of other nodes between them by
 * ggml's CPU backend as a graph of those nodes (the same tensors), so nothing is copied
 * between the two. Nodes the graph marks not to compute (the branches
 * ggml_build_forward_select leaves out) and empty nodes are left alone, as the CPU backend
 * leaves them. */
#include <stdlib.h>

#include "plugin.h"

struct grg_stream {
    ggml_backend_t cpu;
    uint16_t *scratch; /* activations rounded to BF16 */
    size_t scratch_len;
    uint8_t *marked; /* per node: whether the graph marked it to compute */
    int *chain_end;  /* per node: the last node of the attention chain starting there, or -1 */
    int marked_len;
    struct ggml_context *part_ctx; /* the graph of a run of nodes for the CPU backend */
    struct ggml_cgraph *part;
    int part_size;
    struct grg_scratch attn;
};

struct grg_stream *grg_stream_new(int threads)
{
    struct grg_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cpu = grg_cpu_backend_new(threads);
    if (!s->cpu) {
        free(s);
        return NULL;
    }
    return s;
}

void grg_stream_free(struct grg_stream *s)
{
    ggml_backend_free(s->cpu);
    if (s->part_ctx)
        ggml_free(s->part_ctx);
    free(s->scratch);
    free(s->marked);
    free(s->chain_end);
    free(s->attn.q);
    free(s->attn.mask);
    free(s);
}

void grg_stream_set_threads(struct grg_stream *s, int threads)
{
    grg_cpu_set_threads(s->cpu, threads);
}

static bool runs_here(const struct ggml_tensor *t)
{
    return (t->op == GGML_OP_MUL_MAT && grg_serves_mul_mat(t, NULL)) ||
           (t->op == GGML_OP_GET_ROWS && grg_serves_get_rows(t)) ||
           (t->op == GGML_OP_FLASH_ATTN_EXT && grg_serves_flash_attn(t, NULL));
}

static enum ggml_status run_node(struct grg_stream *s, struct ggml_tensor *t)
{
    if (ggml_is_empty(t))
        return GGML_STATUS_SUCCESS;
    switch (t->op) {
    case GGML_OP_GET_ROWS:
        return grg_get_rows(t);
    case GGML_OP_FLASH_ATTN_EXT:
        return grg_flash_attn(t);
    default:
        return grg_mul_mat(t, &s->scratch, &s->scratch_len);
    }
}

/* The last node of an attention chain starting at node i that the graph marked whole, or -1. */
static int chain_at(struct grg_stream *s, struct ggml_cgraph *graph, int i)
{
    int last = grg_attn_chain(graph, i);
    for (int j = i; j <= last; j++) {
        enum ggml_op op = ggml_graph_node(graph, j)->op;
        if (!s->marked[j] && (op == GGML_OP_MUL_MAT || op == GGML_OP_SOFT_MAX))
            return -1;
    }
    return last;
}

/* The index of node t in g, or -1 (t NULL or not a node). */
static int node_index(struct ggml_cgraph *g, const struct ggml_tensor *t)
{
    for (int i = 0; t && i < ggml_graph_n_nodes(g); i++)
        if (ggml_graph_node(g, i) == t)
            return i;
    return -1;
}

/* A graph of `size` nodes at least, for cpu_run. */
static bool part_of_size(struct grg_stream *s, int size)
{
    if (size <= s->part_size)
        return true;
    if (s->part_ctx)
        ggml_free(s->part_ctx);
    struct ggml_init_params params = {
        .mem_size = ggml_graph_overhead_custom((size_t)size, false), .no_alloc = true};
    s->part_ctx = ggml_init(params);
    s->part = s->part_ctx ? ggml_new_graph_custom(s->part_ctx, (size_t)size, false) : NULL;
    s->part_size = s->part ? size : 0;
    return s->part != NULL;
}

/* Nodes [from, to) on the CPU backend: those of them the graph marked, and no others, as a
 * graph of their own (the CPU backend plans every node of the graph it is given: the whole
 * graph each time made a token's planning grow with the square of its nodes). */
static enum ggml_status cpu_run(struct grg_stream *s, struct ggml_cgraph *graph, int from,
                                int to)
{
    if (from >= to)
        return GGML_STATUS_SUCCESS;
    if (!part_of_size(s, to - from))
        return GGML_STATUS_ALLOC_FAILED;
    ggml_graph_clear(s->part);
    for (int i = from; i < to; i++)
        if (s->marked[i]) {
            struct ggml_tensor *t = ggml_graph_node(graph, i);
            t->flags |= GGML_TENSOR_FLAG_COMPUTE;
            ggml_graph_add_node(s->part, t);
        }
    enum ggml_status st = ggml_graph_n_nodes(s->part) > 0
                              ? ggml_backend_graph_compute(s->cpu, s->part)
                              : GGML_STATUS_SUCCESS;
    for (int i = from; i < to; i++)
        ggml_graph_node(graph, i)->flags &= ~GGML_TENSOR_FLAG_COMPUTE;
    return st;
}

enum ggml_status grg_stream_compute(struct grg_stream *s, struct ggml_cgraph *graph)
{
    int n = ggml_graph_n_nodes(graph);
    if (n > s->marked_len) {
        uint8_t *grown = realloc(s->marked, (size_t)n);
        if (grown)
            s->marked = grown;
        int *ends = grown ? realloc(s->chain_end, (size_t)n * sizeof *ends) : NULL;
        if (!ends)
            return GGML_STATUS_ALLOC_FAILED;
        s->chain_end = ends;
        s->marked_len = n;
    }
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *t = ggml_graph_node(graph, i);
        s->marked[i] = (t->flags & GGML_TENSOR_FLAG_COMPUTE) != 0;
        t->flags &= ~GGML_TENSOR_FLAG_COMPUTE;
    }
    /* The chains, found once; one reading V through a CONT takes the CONT's source: the CONT
     * is not run (unmarking it changes no chain: chain_at reads the marks of products and
     * softmaxes only). */
    for (int i = 0; i < n; i++)
        s->chain_end[i] = s->marked[i] ? chain_at(s, graph, i) : -1;
    for (int i = 0; i < n; i++) {
        int last = s->chain_end[i];
        int c = last >= 0 ? node_index(graph, grg_attn_chain_cont(graph, last)) : -1;
        if (c >= 0)
            s->marked[c] = 0;
    }
    enum ggml_status st = GGML_STATUS_SUCCESS;
    int from = 0;
    for (int i = 0; i < n && st == GGML_STATUS_SUCCESS; i++) {
        struct ggml_tensor *t = ggml_graph_node(graph, i);
        if (!s->marked[i])
            continue;
        int last = s->chain_end[i];
        if (last >= 0) {
            st = cpu_run(s, graph, from, i);
            if (st == GGML_STATUS_SUCCESS)
                st = grg_attn_chain_compute(graph, i, last, &s->attn);
            if (st == GGML_STATUS_ABORTED) { /* a mask the call cannot take: ggml's nodes */
                int c = node_index(graph, grg_attn_chain_cont(graph, last));
                st = GGML_STATUS_SUCCESS;
                if (c >= 0) { /* the CONT the chain would have read through, first */
                    s->marked[c] = 1;
                    st = cpu_run(s, graph, c, c + 1);
                }
                if (st == GGML_STATUS_SUCCESS)
                    st = cpu_run(s, graph, i, last + 1);
            }
            from = last + 1;
            i = last;
            continue;
        }
        if (!runs_here(t))
            continue;
        st = cpu_run(s, graph, from, i);
        from = i + 1;
        if (st == GGML_STATUS_SUCCESS)
            st = run_node(s, t);
    }
    if (st == GGML_STATUS_SUCCESS)
        st = cpu_run(s, graph, from, n);
    for (int i = 0; i < n; i++)
        if (s->marked[i])
            ggml_graph_node(graph, i)->flags |= GGML_TENSOR_FLAG_COMPUTE;
    return st;
}
