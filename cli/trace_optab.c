/*
 * trace_optab.c - the trace's operation table.
 */
#include <stdio.h>
#include <string.h>

#include "trace_optab.h"

static const struct tr_opdef opdefs[] = {
    { "client", TR_CLIENT, TR_B_NONE, " owner= ", " nonsecure " },
    { "exit", TR_EXIT, TR_B_NONE, " ", " " },
    { "alloc", TR_ALLOC, TR_B_NONE,
      " size= client= align= pitch= segments= prefer= evict-to= banks= priority= umd-priority= flags= kmt= info2= vidpn= expect= ",
      " " },
    { "destroy", TR_DESTROY, TR_B_NONE, " client= expect= ", " " },
    { "open", TR_OPEN, TR_B_NONE, " client= expect= ", " " },
    { "lock", TR_LOCK, TR_B_NONE, " client= flags= expect= ", " " },
    { "unlock", TR_UNLOCK, TR_B_NONE, " client= expect= ", " " },
    { "write", TR_WRITE, TR_B_NONE, " client= offset= size= pattern= data= expect= ", " " },
    { "read", TR_READ, TR_B_NONE, " client= offset= size= hash= expect= ", " verify " },
    { "resident", TR_RESIDENT, TR_B_NONE, " client= trim= expect= ", " " },
    { "evict", TR_EVICT, TR_B_NONE, " client= expect= ", " " },
    { "submit", TR_SUBMIT, TR_B_SUBMIT, " client= expect= ", " " },
    { "wait", TR_WAIT, TR_B_NONE, " fence= timeout= expect= ", " " },
    { "standby", TR_STANDBY, TR_B_NONE, " expect= ", " " },
    { "hibernate", TR_HIBERNATE, TR_B_NONE, " expect= ", " " },
    { "resume", TR_RESUME, TR_B_NONE, " expect= ", " " },
    { "budget", TR_BUDGET, TR_B_NONE, " client= local= non-local= expect= ", " " },
    { "app-budget", TR_APP_BUDGET, TR_B_NONE, " local= non-local= expect= ", " " },
    { "reserve", TR_RESERVE, TR_B_NONE, " client= local= non-local= expect= ", " " },
    { "memory-info", TR_MEMINFO, TR_B_NONE, " client= group= budget= usage= reservation= available= expect= ", " " },
    { "pin-flip", TR_PIN_FLIP, TR_B_NONE, " client= expect= ", " " },
    { "unpin-flip", TR_UNPIN_FLIP, TR_B_NONE, " client= expect= ", " " },
    { "set-priority", TR_SET_PRIORITY, TR_B_NONE, " client= priority= expect= ", " " },
    { "repeat", 0, TR_B_REPEAT, " ", " " },
    { "frames", 0, TR_B_REPEAT, " ", " " },
    { "end", 0, TR_B_END, " ", " " },
    { "use", 0, TR_B_ITEM, " ", " write " },
    { "copy", 0, TR_B_ITEM, " src-offset= dst-offset= size= ", " " },
    { "fill", 0, TR_B_ITEM, " pattern= offset= size= ", " " },
    { "device", 0, TR_B_NONE, " ", " " },
    { "seed", 0, TR_B_NONE, " ", " " },
    { "data", 0, TR_B_NONE, " ", " " },
};
#define NOPDEFS (sizeof(opdefs) / sizeof(opdefs[0]))

const struct tr_opdef *tr_find_op(const char *w)
{
    for (size_t i = 0; i < NOPDEFS; i++)
        if (strcmp(opdefs[i].word, w) == 0)
            return &opdefs[i];
    return NULL;
}

/* Number of positional words (names) an operation takes: min and max. */
void tr_positional(const char *w, unsigned *min, unsigned *max)
{
    *min = 0;
    *max = 0;
    if (!strcmp(w, "client") || !strcmp(w, "exit") || !strcmp(w, "alloc") || !strcmp(w, "destroy") ||
        !strcmp(w, "open") || !strcmp(w, "lock") || !strcmp(w, "unlock") || !strcmp(w, "write") ||
        !strcmp(w, "read") || !strcmp(w, "use") || !strcmp(w, "fill") || !strcmp(w, "device") ||
        !strcmp(w, "seed") || !strcmp(w, "pin-flip") || !strcmp(w, "unpin-flip") || !strcmp(w, "data") ||
        !strcmp(w, "set-priority")) {
        *min = *max = 1;
    } else if (!strcmp(w, "copy")) {
        *min = *max = 2;
    } else if (!strcmp(w, "resident") || !strcmp(w, "evict")) {
        *min = 1;
        *max = TR_MAX_REFS;
    } else if (!strcmp(w, "repeat") || !strcmp(w, "frames")) {
        *min = 1;
        *max = 1;
    }
}

int tr_key_ok(const char *keys, const char *tok, size_t klen)
{
    char buf[64];
    if (klen + 4 > sizeof(buf)) /* ' ', key, '=', ' ', NUL */
        return 0;
    buf[0] = ' ';
    memcpy(buf + 1, tok, klen + 1); /* includes '=' */
    buf[klen + 2] = ' ';
    buf[klen + 3] = '\0';
    return strstr(keys, buf) != NULL;
}

int tr_bare_ok(const char *bare, const char *tok)
{
    char buf[64];
    if (strlen(tok) + 3 > sizeof(buf))
        return 0;
    snprintf(buf, sizeof(buf), " %s ", tok);
    return strstr(bare, buf) != NULL;
}
