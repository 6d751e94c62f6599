#define _GNU_SOURCE /* open_memstream on older glibc headers */
#include "gen_input.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void messages_open(struct messages *m, const char *file)
{
    m->text = NULL;
    FILE *out = open_memstream(&m->text, &m->size);
    assert_non_null(out);
    m->d = (struct diag){file, out, 0};
}

char *messages_close(struct messages *m)
{
    assert_int_equal(fclose(m->d.out), 0);
    m->d.out = NULL;
    return m->text;
}

int shapes_from_text(const char *name, const char *text, struct shapes *s, char **messages)
{
    struct messages m;
    messages_open(&m, name);
    int rc = shapes_read_buffer(text, strlen(text), &m.d, s);
    *messages = messages_close(&m);
    return rc;
}

void plan_from_text(const char *text, struct shapes *s, struct plan *p)
{
    char *messages;
    if (shapes_from_text("plan.yaml", text, s, &messages) != 0)
        fail_msg("the shapes were refused: %s", messages);
    free(messages);
    assert_int_equal(plan_build(s, &s->gate, &s->buckets, &s->target, p), 0);
}

const char llama_shapes[] =
    "layers:\n"
    "  - {name: q_proj,    N: 4096,  K: 4096,  M: [1, 3, 4, 16]}\n"
    "  - {name: k_proj,    N: 4096,  K: 4096,  M: [1, 4]}\n"
    "  - {name: up_proj,   N: 11008, K: 4096,  M: [1, 200]}\n"
    "  - {name: down_proj, N: 4096,  K: 11008, M: [1]}\n"
    "  - {name: tiny,      N: 896,   K: 896,   M: [1]}\n";
