/* The output folder: written in full beside its place, then swapped in. Only a folder the
 * generator made (one holding its manifest.json), an empty one or none is ever replaced, so
 * -o cannot delete a user's files; on failure nothing written is left behind. */
#ifndef GEN_OUT_DIR_H
#define GEN_OUT_DIR_H

#include <stddef.h>

struct out_dir {
    char path[4096];     /* where the output goes, without trailing slashes */
    char tmp[4096 + 16]; /* the fresh folder beside it */
    size_t made_parents; /* length of the first parent folder made for it, 0 if none */
};

/* Checks that `path` may be replaced and makes the fresh folder (and missing parents). Returns
 * 0, or -1 after saying why on stderr (nothing is made then). */
int out_dir_begin(struct out_dir *o, const char *path);

/* Writes one file into the fresh folder and syncs it to disk. Returns 0, or -1 after saying
 * why (call out_dir_abort). */
int out_dir_write(struct out_dir *o, const char *name, const char *data, size_t len);

/* Syncs the fresh folder and moves it into place; the earlier output is removed after that.
 * Returns 0, or -1 after saying why (call out_dir_abort; the earlier output is as it was). */
int out_dir_commit(struct out_dir *o);

/* Removes the fresh folder and the parent folders out_dir_begin made. */
void out_dir_abort(struct out_dir *o);

#endif
