/* Merges two job-file parts as a parent of the MPI layer's tree does
 * (heapscope__job_merge, layer_abi.h), without MPI: run with libheapscope.so preloaded,
 * `job_merge_parts A B OUT` reads the parts from files A and B and writes the merged
 * one to OUT (tests/mpi/test_job_peak_stacks.py builds the parts). Exit 1 when the merge
 * fails, 2 when the recorder is not there, 3 on a file error. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*merge_fn)(const void *, size_t, const void *, size_t, void **, size_t *);

static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        exit(3);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    void *p = malloc(*len ? *len : 1);
    if (!p || fread(p, 1, *len, f) != *len)
        exit(3);
    fclose(f);
    return p;
}

int main(int argc, char **argv)
{
    merge_fn merge = (merge_fn)dlsym(RTLD_DEFAULT, "heapscope__job_merge");
    if (!merge || argc != 4)
        return 2;
    size_t alen, blen, outlen;
    void *a = slurp(argv[1], &alen), *b = slurp(argv[2], &blen), *out;
    if (merge(a, alen, b, blen, &out, &outlen) != 0)
        return 1;
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(out, 1, outlen, f) != outlen || fclose(f) != 0)
        return 3;
    return 0;
}
