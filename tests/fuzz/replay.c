/*
 * replay.c - the driver `make test` links each harness with instead of
 * libFuzzer: every file of tests/fuzz/corpus/NAME (the seeds) and
 * tests/fuzz/crashes/NAME (inputs that once broke something) goes through
 * LLVMFuzzerTestOneInput once, in name order, or the files given on the
 * command line. Prints how many inputs ran, then "NAME: 1 passed, 0
 * failed" (one test case: the whole replay); a broken invariant aborts. An empty corpus is a failure (the seeds are checked in).
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME: the harness's name"
#endif

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot read\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t k;
    while (buf != NULL && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every regular file of dir (a missing directory holds none). */
static int run_dir(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*nn));
            if (nn == NULL)
                abort();
            names = nn;
        }
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (names[n] == NULL)
            abort();
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(names[i]) != 0)
                rc = -1;
            else
                ++*count;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (run_file(argv[i]) != 0)
                rc = -1;
            else
                count++;
    } else {
        rc |= run_dir("tests/fuzz/corpus/" FUZZ_NAME, &count);
        rc |= run_dir("tests/fuzz/crashes/" FUZZ_NAME, &count);
        if (count == 0) {
            fprintf(stderr, "%s: no inputs in tests/fuzz/corpus/%s (run from the repository root)\n", FUZZ_NAME,
                    FUZZ_NAME);
            rc = -1;
        }
    }
    printf("%s: %u inputs replayed\n", FUZZ_NAME, count);
    printf("%s: %d passed, %d failed\n", FUZZ_NAME, rc == 0, rc != 0);
    return rc != 0;
}
