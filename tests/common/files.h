/* Whole files and scratch folders, for the host tests. */
#ifndef TESTS_FILES_H
#define TESTS_FILES_H

#include <stddef.h>

/* The file at `path` as one NUL-terminated string (caller frees), or NULL when it cannot be
 * opened. */
char *file_read(const char *path);

/* Writes `text` to the file at `path`; fails the test when it cannot. */
void file_write(const char *path, const char *text);

/* Makes a fresh folder /tmp/gemm-rvv-NAME-XXXXXX into path[size]; fails the test when it
 * cannot. */
void temp_dir_make(char *path, size_t size, const char *name);

/* Removes the folder at `path` and all it holds; 0 when done. */
int temp_dir_remove(const char *path);

#endif
