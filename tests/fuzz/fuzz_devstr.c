/*
 * fuzz_devstr.c - device strings (host/src/gmc_devstr.c) on any text.
 *
 * Invariants: no crash or sanitizer report; the status is a known code,
 * the same with and without an error position, and the same for a
 * second call; a refusal's position lies inside the string (or at its
 * end); the string is not modified.
 */
#include <string.h>

#include "fuzz.h"
#include "gmc.h"

static int known_status(int st)
{
    for (size_t i = 0; i < GMC_STATUS_COUNT; i++)
        if (gmc_status_table[i].code == st)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    size_t len = strlen(s);
    size_t pos1 = (size_t)-1, pos2 = (size_t)-1;
    int a = gmc_device_string_check(s, &pos1);
    FUZZ_CHECK(known_status(a), "unknown status %d", a);
    FUZZ_CHECK(gmc_device_string_check(s, NULL) == a, "status changes without err_pos");
    FUZZ_CHECK(gmc_device_string_check(s, &pos2) == a && pos1 == pos2, "a second call differs");
    FUZZ_CHECK(strlen(s) == len && memcmp(s, data, len) == 0, "the string changed");
    if (a != GMC_OK)
        FUZZ_CHECK(pos1 <= len, "error position %zu past the end (%zu) of \"%s\"", pos1, len, s);
    free(s);
    return 0;
}
