/*
 * fuzz_trace.c - the workload trace parser (cli/trace*.c) on any text.
 *
 * Invariants: no crash, no sanitizer report, no hang (the expansion
 * budget); a refused trace gives GMC_E_INVALID_ARG (or GMC_E_NO_MEMORY), no
 * operation list and one message "t.trace:LINE: reason"; an accepted one
 * has at most TR_MAX_STEPS operations, each but the device operations
 * (wait, standby, hibernate, resume) naming an existing client, and the
 * allocation operations an existing entity, and write data= inside the
 * trace's data.
 */
#include <string.h>

#include "fuzz.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) /* longer inputs only slow the search down */
        return 0;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* a NUL ends the text, as it ends a file's string */
    struct trace *t = (struct trace *)1;
    char err[512];
    int rc = trace_parse("t.trace", text, 0, 0, &t, err, sizeof(err));
    if (rc != GMC_OK) {
        FUZZ_CHECK(rc == GMC_E_INVALID_ARG || rc == GMC_E_NO_MEMORY, "status %d", rc);
        FUZZ_CHECK(t == NULL, "refused trace left an operation list");
        FUZZ_CHECK(strncmp(err, "t.trace:", 8) == 0 && strlen(err) > 9, "message \"%s\"", err);
    } else {
        FUZZ_CHECK(t != NULL, "accepted trace without operations");
        FUZZ_CHECK(t->nops <= TR_MAX_STEPS, "%u operations", t->nops);
        for (unsigned i = 0; i < t->nops; i++) {
            const struct tr_op *o = &t->ops[i];
            FUZZ_CHECK(o->kind > 0 && o->kind < TR_KIND_COUNT, "op %u kind %d", i, o->kind);
            int device_op = o->kind == TR_WAIT || o->kind == TR_STANDBY || o->kind == TR_HIBERNATE ||
                            o->kind == TR_RESUME;
            FUZZ_CHECK(device_op || o->client < t->nclients, "op %u client %u of %u", i, o->client, t->nclients);
            if (o->kind == TR_ALLOC || o->kind == TR_READ || o->kind == TR_WRITE || o->kind == TR_PIN_FLIP ||
                o->kind == TR_UNPIN_FLIP || o->kind == TR_SET_PRIORITY)
                FUZZ_CHECK(o->entity < t->nentities, "op %u entity %u of %u", i, o->entity, t->nentities);
            /* write data= lies inside the trace's data */
            if (o->has_data)
                FUZZ_CHECK(o->data_off <= t->data_len && o->size <= t->data_len - o->data_off,
                           "op %u data %llu+%llu of %llu", i, (unsigned long long)o->data_off,
                           (unsigned long long)o->size, (unsigned long long)t->data_len);
        }
        trace_free(t);
    }
    free(text);
    return 0;
}
