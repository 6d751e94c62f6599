/* gemm-rvv-gen run as a user runs it, in a scratch folder of the test's own (`work`): for the
 * host tests of the command line, the output folder and what the generator writes. */
#ifndef TESTS_GEN_RUN_H
#define TESTS_GEN_RUN_H

#include <stddef.h>

extern char work[256]; /* the scratch folder of this run of the test program */

/* The shapes file every such test finds in `work` as shapes.yaml: 4 shapes, 3 plans, one
 * shape left to the fallback. */
extern const char work_shapes[];

/* cmocka group setup and teardown: makes `work` with shapes.yaml in it, and removes it. */
int work_setup(void **state);
int work_teardown(void **state);

/* Runs `shell` (a fragment, then the generator `bin` with `args`) in `work`; returns its exit
 * status and its stdout and stderr together in *out (caller frees). */
int run(const char *shell, const char *bin, const char *args, char **out);

/* The generator as built for tests (with sanitizers), run in `work`. */
int gen(const char *args, char **out);

/* A file of `work`, by its name there: written, read (NULL when absent; caller frees). */
void work_write(const char *name, const char *text);
char *work_read(const char *name);

/* Every file of two folders of `work`, compared byte for byte; returns how many there were. */
size_t same_folders(const char *a, const char *b);

/* Whether `work` holds an entry whose name starts with `prefix`. */
int exists_in_work(const char *prefix);

#endif
