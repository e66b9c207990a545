/*
 * fuzz.h - what every harness in tests/fuzz shares (docs/fuzzing.md).
 *
 * A harness is one LLVMFuzzerTestOneInput(). `make fuzz` links it with
 * libFuzzer (clang, -fsanitize=fuzzer,address,undefined); `make test`
 * links it with tests/fuzz/replay.c instead (the project's compiler, rel
 * and ASan+UBSan) and feeds it every checked-in corpus and crash input.
 * A broken invariant prints what broke and aborts, which both drivers
 * report as a failure.
 */
#ifndef GMC_FUZZ_H
#define GMC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                                   \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            fprintf(stderr, "%s:%d: invariant broken: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                                       \
            fputc('\n', stderr);                                                                                \
            abort();                                                                                            \
        }                                                                                                       \
    } while (0)

/* A reader of the fuzz input: bytes run out as zeros. */
struct fuzz_in {
    const uint8_t *p;
    size_t n;
};

static inline uint8_t fz_u8(struct fuzz_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint64_t fz_uint(struct fuzz_in *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)fz_u8(in) << (8u * i);
    return v;
}

/* 0..n-1 (n >= 1) */
static inline uint32_t fz_below(struct fuzz_in *in, uint32_t n)
{
    return (uint32_t)(fz_uint(in, n > 256u ? (n > 65536u ? 4u : 2u) : 1u) % n);
}

#endif
