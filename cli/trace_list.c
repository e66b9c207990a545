/*
 * trace_list.c - names for an expanded trace: operation kinds, flag bits
 * (the tables are generated from spec/flags.toml: gmc_flag_names.c) and
 * statuses for expect=.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace_list.h"

void tr_flags_str(const struct gmc_flag_name *t, uint32_t v, char *buf, size_t n)
{
    size_t len = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (; t->name != NULL; t++) {
        if ((v & t->bit) == 0u)
            continue;
        v &= ~t->bit;
        int k = snprintf(buf + len, n - len, "%s%s", len ? "," : "", t->name);
        if (k < 0 || (size_t)k >= n - len)
            return;
        len += (size_t)k;
    }
    if (v != 0u)
        snprintf(buf + len, n - len, "%s0x%" PRIx32, len ? "," : "", v);
}

static const char *const kind_names[TR_KIND_COUNT] = {
    [TR_CLIENT] = "client",   [TR_EXIT] = "exit",         [TR_ALLOC] = "alloc",
    [TR_DESTROY] = "destroy", [TR_OPEN] = "open",         [TR_LOCK] = "lock",
    [TR_UNLOCK] = "unlock",   [TR_WRITE] = "write",       [TR_READ] = "read",
    [TR_RESIDENT] = "resident", [TR_EVICT] = "evict",     [TR_SUBMIT] = "submit",
    [TR_WAIT] = "wait",       [TR_STANDBY] = "standby",   [TR_HIBERNATE] = "hibernate",
    [TR_RESUME] = "resume",   [TR_BUDGET] = "budget",     [TR_APP_BUDGET] = "app-budget",
    [TR_RESERVE] = "reserve", [TR_MEMINFO] = "memory-info", [TR_PIN_FLIP] = "pin-flip",
    [TR_UNPIN_FLIP] = "unpin-flip", [TR_SET_PRIORITY] = "set-priority",
};

const char *tr_kind_name(int kind)
{
    return kind > 0 && kind < TR_KIND_COUNT ? kind_names[kind] : "?";
}

int tr_status_from_name(const char *name, int *status)
{
    char buf[96];
    if (strcmp(name, "OK") == 0 || strcmp(name, "GMC_OK") == 0) {
        *status = GMC_OK;
        return 0;
    }
    const char *n = name;
    if (strncmp(n, "GMC_E_", 6) == 0)
        n += 6;
    else if (strncmp(n, "E_", 2) == 0)
        n += 2;
    if (snprintf(buf, sizeof(buf), "GMC_E_%s", n) >= (int)sizeof(buf))
        return -1;
    for (size_t i = 0; i < GMC_STATUS_COUNT; i++) {
        if (strcmp(gmc_status_table[i].name, buf) == 0) {
            *status = gmc_status_table[i].code;
            return 0;
        }
    }
    return -1;
}
