/*
 * gmc_handle.c - generation-checked handle table. See gmc_handle.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_handle.h"
#include "gmc_status.h"

#define KIND_SHIFT 56u
#define GEN_SHIFT 32u
/* Indices stay below this so that `next` (index + 1) fits 32 bits. */
#define INDEX_LIMIT 0xFFFFFFF0u

static uint64_t encode(uint8_t kind, uint32_t gen, uint32_t index)
{
    return (uint64_t)kind << KIND_SHIFT | (uint64_t)gen << GEN_SHIFT | index;
}

void gmc_htab_init(struct gmc_htab *t)
{
    memset(t, 0, sizeof(*t));
}

void gmc_htab_fini(struct gmc_htab *t)
{
    free(t->slot);
    memset(t, 0, sizeof(*t));
}

int gmc_htab_reserve(struct gmc_htab *t, uint32_t n)
{
    uint64_t room = (uint64_t)t->nfree + (t->cap - t->top);
    if (room >= n)
        return GMC_OK;
    uint64_t need = (uint64_t)t->top + (n - t->nfree);
    if (need > INDEX_LIMIT)
        return GMC_E_OVERFLOW;
    uint64_t cap = t->cap < 64u ? 64u : t->cap;
    while (cap < need)
        cap *= 2u;
    if (cap > INDEX_LIMIT)
        cap = INDEX_LIMIT;
    struct gmc_hslot *s = realloc(t->slot, (size_t)cap * sizeof(*s));
    if (s == NULL)
        return GMC_E_NO_MEMORY;
    memset(s + t->cap, 0, (size_t)(cap - t->cap) * sizeof(*s));
    t->slot = s;
    t->cap = (uint32_t)cap;
    return GMC_OK;
}

uint64_t gmc_htab_add(struct gmc_htab *t, enum gmc_hkind kind, void *obj)
{
    uint32_t i;
    if (t->free != 0u) {
        i = t->free - 1u;
        t->free = t->slot[i].next;
        t->nfree--;
    } else {
        i = t->top++;
        t->slot[i].gen = 1u;
    }
    struct gmc_hslot *s = &t->slot[i];
    s->obj = obj;
    s->kind = (uint8_t)kind;
    s->next = 0u;
    t->live++;
    return encode(s->kind, s->gen, i);
}

static struct gmc_hslot *slot_of(const struct gmc_htab *t, uint64_t h, enum gmc_hkind kind)
{
    uint32_t i = (uint32_t)h;
    uint32_t gen = (uint32_t)(h >> GEN_SHIFT) & GMC_HANDLE_GEN_MAX;
    if ((uint8_t)(h >> KIND_SHIFT) != (uint8_t)kind || i >= t->top)
        return NULL;
    struct gmc_hslot *s = &t->slot[i];
    if (s->obj == NULL || s->kind != (uint8_t)kind || s->gen != gen)
        return NULL;
    return s;
}

void *gmc_htab_get(const struct gmc_htab *t, uint64_t h, enum gmc_hkind kind)
{
    struct gmc_hslot *s = slot_of(t, h, kind);
    return s != NULL ? s->obj : NULL;
}

void gmc_htab_remove(struct gmc_htab *t, uint64_t h)
{
    uint32_t i = (uint32_t)h;
    struct gmc_hslot *s = slot_of(t, h, (enum gmc_hkind)(uint8_t)(h >> KIND_SHIFT));
    if (s == NULL)
        return;
    s->obj = NULL;
    t->live--;
    if (s->gen == GMC_HANDLE_GEN_MAX) {
        s->gen = 0u; /* retired: no handle matches generation 0 */
        return;
    }
    s->gen++;
    s->next = t->free;
    t->free = i + 1u;
    t->nfree++;
}
