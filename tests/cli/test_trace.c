/*
 * test_trace.c - the workload trace parser (cli/trace*.c): what good traces
 * expand to, and the exact "FILE:LINE: reason" of each malformed one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace.h"

static struct trace *ok(const char *text)
{
    char err[1024];
    struct trace *t = NULL;
    int rc = trace_parse("t.trace", text, 0, 0, &t, err, sizeof(err));
    if (rc != GMC_OK)
        fail_msg("unexpected error: %s\n--- trace ---\n%s", err, text);
    assert_non_null(t);
    return t;
}

#define bad(text, msg) bad_at((text), (msg), __LINE__)
static void bad_at(const char *text, const char *msg, int line)
{
    char err[1024];
    struct trace *t = (struct trace *)1;
    int rc = trace_parse("t.trace", text, 0, 0, &t, err, sizeof(err));
    if (rc == GMC_OK) {
        trace_free(t);
        fail_msg("test line %d: accepted, expected \"%s\"\n--- trace ---\n%s", line, msg, text);
    }
    assert_null(t);
    if (strcmp(err, msg) != 0)
        fail_msg("test line %d:\n  got      \"%s\"\n  expected \"%s\"", line, err, msg);
}

/* ------------------------------------------------------------------ good */

static void test_minimal(void **state)
{
    (void)state;
    struct trace *t = ok("alloc a size=64K flags=CpuVisible\nresident a\nwrite a\nread a verify\nevict a\ndestroy a\n");
    /* an implicit client "default" comes first */
    assert_int_equal(t->nclients, 1);
    assert_string_equal(t->clients[0].name, "default");
    assert_int_equal(t->nops, 7);
    static const int kinds[] = { TR_CLIENT, TR_ALLOC, TR_RESIDENT, TR_WRITE, TR_READ, TR_EVICT, TR_DESTROY };
    for (unsigned i = 0; i < 7; i++)
        assert_int_equal(t->ops[i].kind, kinds[i]);
    assert_int_equal(t->ops[1].line, 1);
    assert_int_equal(t->ops[6].line, 6);
    assert_int_equal(t->nentities, 1);
    assert_int_equal(t->entities[0].desc.size, 65536);
    assert_int_equal(t->entities[0].desc.flags, GMC_ALLOC_CPU_VISIBLE);
    assert_int_equal(t->entities[0].desc.priority, GMC_PRIORITY_NORMAL);
    assert_int_equal(t->entities[0].default_segments, 1);
    assert_int_equal(t->ops[3].offset, 0);
    assert_int_equal(t->ops[3].size, 65536);
    assert_true(t->ops[4].verify);
    assert_int_equal(t->seed, 1);
    trace_free(t);
}

static void test_alloc_fields(void **state)
{
    (void)state;
    struct trace *t = ok("# comment line\n"
                         "client game owner=7\n"
                         "client sandbox owner=7 nonsecure   # trailing comment\n"
                         "alloc rt size=0x10000 client=game align=64K pitch=128K segments=1,2,3 prefer=2:top,1 "
                         "evict-to=3 banks=2,1 priority=high flags=CpuVisible,Cached kmt=Zeroed,CreateResource,"
                         "CreateShared,NonSecure info2=OverridePriority umd-priority=0x1234 vidpn=0\n"
                         "open rt client=sandbox\n"
                         "alloc big size=2M priority=0x55 segments=2 kmt=ExistingSysMem\n");
    assert_int_equal(t->nclients, 2);
    assert_int_equal(t->clients[0].owner, 7);
    assert_int_equal(t->clients[1].flags, GMC_CLIENT_NON_SECURE);
    const struct gmc_alloc_desc *d = &t->entities[0].desc;
    assert_int_equal(d->size, 0x10000);
    assert_int_equal(d->alignment, 0x10000);
    assert_int_equal(d->pitch_aligned_size, 0x20000);
    assert_int_equal(d->supported_segments, 7);
    assert_int_equal(d->preferred[0].id, 2);
    assert_int_equal(d->preferred[0].top_down, 1);
    assert_int_equal(d->preferred[1].id, 1);
    assert_int_equal(d->preferred[1].top_down, 0);
    assert_int_equal(d->preferred[2].id, 0);
    assert_int_equal(d->eviction_segments, 4);
    assert_int_equal(d->hinted_banks[0], 2);
    assert_int_equal(d->hinted_banks[1], 1);
    assert_int_equal(d->hinted_banks[2], 0);
    assert_int_equal(d->priority, GMC_PRIORITY_HIGH);
    assert_int_equal(d->flags, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CACHED);
    assert_int_equal(d->kmt_flags, GMC_KMT_ZEROED | GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED |
                                       GMC_KMT_NON_SECURE);
    assert_int_equal(d->info2_flags, GMC_INFO2_OVERRIDE_PRIORITY);
    assert_int_equal(d->umd_priority, 0x1234);
    assert_int_equal(d->vidpn_source_id, 0);
    assert_int_equal(t->entities[0].default_segments, 0);
    assert_int_equal(t->entities[1].desc.priority, 0x55);
    assert_int_equal(t->entities[1].desc.system_mem_size, 2u << 20);
    assert_int_equal(t->entities[1].client, 0); /* the first client */
    /* open gives the sandbox a handle, acting as itself */
    assert_int_equal(t->ops[3].kind, TR_OPEN);
    assert_int_equal(t->ops[3].client, 1);
    trace_free(t);
}

static void test_repeat_and_expressions(void **state)
{
    (void)state;
    struct trace *t = ok("repeat 4 as i\n"
                         "  alloc tex{i} size={(i+1)*4}K\n"
                         "end\n"
                         "resident tex2 tex3\n"
                         "frames 3 as f\n"
                         "  resident tex{f} tex{(f+1)%4}\n"
                         "  submit\n"
                         "    copy tex{f} tex{(f + 1) % 4} size=4K\n"
                         "    fill tex3 pattern=0xdeadbeef offset=8 size={min(16, 4*f+4)}\n"
                         "    use tex{max(f,2)}\n"
                         "  end\n"
                         "  evict tex{f} tex{(f+1)%4}\n"
                         "end\n");
    assert_int_equal(t->nentities, 4);
    assert_string_equal(t->entities[2].name, "tex2");
    assert_int_equal(t->entities[2].desc.size, 12 * 1024);
    assert_int_equal(t->frames, 3); /* the frames loop only */
    assert_int_equal(t->ops[1].frame, -1);
    /* client + 4 allocs + resident + 3 * (resident, submit, evict) */
    assert_int_equal(t->nops, 1 + 4 + 1 + 9);
    const struct tr_op *s = &t->ops[1 + 4 + 1 + 3 + 1]; /* frame f=1's submit */
    assert_int_equal(s->kind, TR_SUBMIT);
    assert_int_equal(s->line, 7);
    assert_int_equal(s->frame, 1);
    assert_int_equal(s->nops, 2);
    assert_int_equal(s->ops[0].kind, GMC_GPU_COPY);
    assert_int_equal(s->ops[0].size, 4096);
    assert_int_equal(s->refs[s->ops[0].src].entity, 1);
    assert_int_equal(s->refs[s->ops[0].dst].entity, 2);
    assert_int_equal(s->refs[s->ops[0].dst].write, 1);
    assert_int_equal(s->ops[1].kind, GMC_GPU_FILL);
    assert_int_equal(s->ops[1].pattern, 0xdeadbeefu);
    assert_int_equal(s->ops[1].dst_offset, 8);
    assert_int_equal(s->ops[1].size, 8);
    /* tex1, tex2, tex3 and use tex{max(1,2)} = tex2 again: three refs */
    assert_int_equal(s->nrefs, 3);
    trace_free(t);
}

static void test_rand_seed(void **state)
{
    (void)state;
    const char *txt = "repeat 16 as i\n alloc a{i} size={1+rand(64)}K\nend\n";
    char err[256];
    struct trace *a, *b, *c;
    assert_int_equal(trace_parse("t", txt, 1, 5, &a, err, sizeof(err)), GMC_OK);
    assert_int_equal(trace_parse("t", txt, 1, 5, &b, err, sizeof(err)), GMC_OK);
    assert_int_equal(trace_parse("t", txt, 1, 6, &c, err, sizeof(err)), GMC_OK);
    int same_ab = 1, same_ac = 1;
    for (unsigned i = 0; i < 16; i++) {
        same_ab &= a->entities[i].desc.size == b->entities[i].desc.size;
        same_ac &= a->entities[i].desc.size == c->entities[i].desc.size;
        assert_true(a->entities[i].desc.size >= 1024 && a->entities[i].desc.size <= 64 * 1024);
    }
    assert_true(same_ab);
    assert_false(same_ac);
    trace_free(a);
    trace_free(b);
    trace_free(c);
    /* the trace's own seed line, overridden by the caller's */
    struct trace *t = ok("seed 77\ndevice sim:latency=10\nalloc a size=4K\n");
    assert_int_equal(t->seed, 77);
    assert_string_equal(t->device, "sim:latency=10");
    trace_free(t);
    assert_int_equal(trace_parse("t", "seed 77\n", 1, 3, &t, err, sizeof(err)), GMC_OK);
    assert_int_equal(t->seed, 3);
    trace_free(t);
}

static void test_locks_power_expect(void **state)
{
    (void)state;
    struct trace *t = ok("alloc a size=8K flags=CpuVisible\n"
                         "lock a flags=WriteOnly,DonotWait\n"
                         "write a offset=4K size=100 pattern=0x01020304\n"
                         "unlock a\n"
                         "lock a flags=ReadOnly\n"
                         "read a size=4K verify\n"
                         "unlock a\n"
                         "lock a flags=ReadOnly,WriteOnly expect=LOCK_FLAGS\n"
                         "evict a expect=GMC_E_NOT_RESIDENT\n"
                         "standby\n"
                         "resume\n"
                         "hibernate\n"
                         "resume\n"
                         "wait timeout=500\n"
                         "alloc b size=4K flags=PermanentSysMem expect=E_RULE_PERMSYSMEM_NEEDS_CPUVISIBLE\n"
                         "alloc b size=4K\n"
                         "exit default\n");
    assert_int_equal(t->ops[2].lock_flags, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DONOT_WAIT);
    assert_int_equal(t->ops[3].has_pattern, 1);
    assert_int_equal(t->ops[3].pattern, 0x01020304u);
    assert_int_equal(t->ops[3].offset, 4096);
    assert_int_equal(t->ops[3].size, 100);
    assert_int_equal(t->ops[8].expect, GMC_E_LOCK_FLAGS);
    assert_int_equal(t->ops[9].expect, GMC_E_NOT_RESIDENT);
    assert_int_equal(t->ops[14].timeout_us, 500);
    assert_int_equal(t->ops[15].expect, GMC_E_RULE_PERMSYSMEM_NEEDS_CPUVISIBLE);
    assert_int_equal(t->ops[17].kind, TR_EXIT);
    trace_free(t);
}

static void test_numbers(void **state)
{
    (void)state;
    struct trace *t = ok("alloc a size=1M\nalloc b size=3KiB\nalloc c size=1G\nalloc d size=0x1000\nalloc e size=12345\n");
    assert_int_equal(t->entities[0].desc.size, 1u << 20);
    assert_int_equal(t->entities[1].desc.size, 3072);
    assert_int_equal(t->entities[1].cpu_size, 4096);
    assert_int_equal(t->entities[2].desc.size, 1u << 30);
    assert_int_equal(t->entities[3].desc.size, 4096);
    assert_int_equal(t->entities[4].desc.size, 12345);
    trace_free(t);
}

static void test_names_reused(void **state)
{
    (void)state;
    struct trace *t = ok("alloc a size=4K\ndestroy a\nalloc a size=8K\nresident a\n");
    assert_int_equal(t->nentities, 2);
    assert_int_equal(t->ops[4].refs[0].entity, 1);
    trace_free(t);
}

/* ------------------------------------------------------------------- bad */

static void test_bad_syntax(void **state)
{
    (void)state;
    bad("alocc a size=4K\n", "t.trace:1: unknown operation 'alocc'");
    bad("\n\n  frobnicate\n", "t.trace:3: unknown operation 'frobnicate'");
    bad("alloc a sise=4K\n", "t.trace:1: alloc: unknown key 'sise'");
    bad("alloc a size=\n", "t.trace:1: alloc: empty value for 'size'");
    bad("alloc a =4K\n", "t.trace:1: alloc: '=' without a key");
    bad("alloc a size=4K size=8K\n", "t.trace:1: alloc: 'size' given twice");
    bad("alloc a b size=4K\n", "t.trace:1: alloc: unexpected word 'b'");
    bad("alloc\n", "t.trace:1: alloc: missing allocation name");
    bad("alloc size=4K\n", "t.trace:1: alloc: missing allocation name");
    bad("client\n", "t.trace:1: client: missing client name");
    bad("resident\n", "t.trace:1: resident: missing allocation name");
    bad("alloc a size=4K\nread a verify now\n", "t.trace:2: read: unexpected word 'now'");
    bad("wait 5\n", "t.trace:1: wait: unexpected word '5'");
    bad("repeat\nend\n", "t.trace:1: repeat: missing count");
    bad("repeat 3 with i\nend\n", "t.trace:1: repeat: expected 'as VAR' after the count, got 'with'");
    bad("repeat 3 as\nend\n", "t.trace:1: repeat: 'as' needs a variable name");
    bad("repeat 3 as 9x\nend\n", "t.trace:1: repeat: bad variable name '9x'");
    bad("repeat 2\nalloc a size=4K\n", "t.trace:1: 'repeat' without 'end'");
    bad("alloc a size=4K\nend\n", "t.trace:2: 'end' without 'repeat', 'frames' or 'submit'");
    bad("alloc a size=4K\nsubmit\n use a\n", "t.trace:2: 'submit' without 'end'");
    bad("alloc a size=4K\nuse a\n", "t.trace:2: 'use' outside a submit block");
    bad("alloc a size=4K\nresident a\nsubmit\n resident a\nend\n",
        "t.trace:4: 'resident' inside a submit block (only use, copy and fill; close it with 'end')");
    bad("alloc a size=4K\nresident a\nsubmit\nend\n",
        "t.trace:3: submit: references no allocation (add use, copy or fill lines)");
    bad("alloc a size=4K\nresident a\nsubmit\n copy a\nend\n",
        "t.trace:4: copy: needs a source and a destination allocation");
    bad("repeat 2\nrepeat 2\nrepeat 2\nrepeat 2\nrepeat 2\nrepeat 2\nrepeat 2\nrepeat 2\nrepeat 2\n",
        "t.trace:9: blocks nested deeper than 8");
    bad("alloc a size={1+}\n", "t.trace:1: expression: value missing");
    bad("alloc a size={1\n", "t.trace:1: '{' without '}'");
    bad("alloc a size=1}\n", "t.trace:1: '}' without '{'");
    bad("alloc a size={{1}}\n", "t.trace:1: '{' inside '{...}'");
    bad("alloc a size={x}K\n", "t.trace:1: expression: unknown variable 'x'");
    bad("alloc a size={4/0}K\n", "t.trace:1: expression: division by zero");
    bad("alloc a size={(4}K\n", "t.trace:1: expression: missing ')'");
    bad("alloc a size={sqrt(4)}K\n", "t.trace:1: expression: unknown function 'sqrt' (rand(N), min(A,B), max(A,B))");
    bad("alloc a size={rand(0)}K\n", "t.trace:1: expression: rand(N) needs N >= 1");
    bad("alloc a size={4 4}K\n", "t.trace:1: expression: unexpected '4' in {4 4}");
    bad("repeat 2 as i\n repeat 2 as i\n end\nend\n",
        "t.trace:2: repeat: variable 'i' is already used by an enclosing loop (i=0)");
    bad("repeat x\nend\n", "t.trace:1: repeat: bad count 'x'");
    bad("frames {2-3}\nend\n", "t.trace:1: frames: bad count '-1'");
    bad("frames 2 as f\n frames 2 as f\n end\nend\n",
        "t.trace:2: frames: variable 'f' is already used by an enclosing loop (f=0)");
    bad("repeat 2000000\nend\n", "t.trace:1: repeat: count 2000000 is more than 1000000");
    bad("device sim\ndevice sim\n", "t.trace:2: second 'device' line (first at line 1)");
    bad("device nope\n", "t.trace:1: device: bad device string 'nope' (GMC_E_BAD_DEVICE_STRING at byte 0)");
    bad("seed x\n", "t.trace:1: seed: bad number 'x'");
    bad("repeat 1\nseed 4\nend\n", "t.trace:2: 'seed' inside a block");
    bad("alloc a size=4K\x01\n", "t.trace:1: control character 0x01");
}

static void test_bad_values(void **state)
{
    (void)state;
    bad("alloc a\n", "t.trace:1: alloc: missing size=");
    bad("alloc a size=4X\n", "t.trace:1: alloc: bad number '4X' for size");
    bad("alloc a size=-4\n", "t.trace:1: alloc: bad number '-4' for size");
    bad("alloc a size=0x\n", "t.trace:1: alloc: bad number '0x' for size");
    bad("alloc a size=99999999999999999999\n", "t.trace:1: alloc: bad number '99999999999999999999' for size");
    bad("alloc a size=0\n", "t.trace:1: alloc: size must be at least 1");
    bad("alloc a size=2000G\n", "t.trace:1: alloc: size 2000G is out of range (at most 1099511627776)");
    bad("alloc a size=4K flags=CpuVisibel\n", "t.trace:1: alloc: unknown flags flag 'CpuVisibel'");
    bad("alloc a size=4K flags=Zeroed\n", "t.trace:1: alloc: 'Zeroed' is not a flags= flag (it is a kmt= flag)");
    bad("alloc a size=4K kmt=Primary\n", "t.trace:1: alloc: 'Primary' is not a kmt= flag (it is a info2= flag)");
    bad("alloc a size=4K flags=CpuVisible,,Cached\n", "t.trace:1: alloc: empty name in flags=CpuVisible,,Cached");
    bad("alloc a size=4K flags=Cached,Cached\n", "t.trace:1: alloc: flag 'Cached' given twice");
    bad("alloc a size=4K segments=0\n", "t.trace:1: alloc: bad segment id '0' in segments= (1..31)");
    bad("alloc a size=4K segments=1,32\n", "t.trace:1: alloc: bad segment id '32' in segments= (1..31)");
    bad("alloc a size=4K segments=1,1\n", "t.trace:1: alloc: segment 1 given twice in segments=");
    bad("alloc a size=4K segments=1:top\n", "t.trace:1: alloc: bad entry '1:top' in segments= (a segment id)");
    bad("alloc a size=4K prefer=1:up\n",
        "t.trace:1: alloc: bad entry '1:up' in prefer= (a segment id, optionally ':top')");
    bad("alloc a size=4K prefer=1,2,3,4,5,6\n", "t.trace:1: alloc: more than 5 entries in prefer=");
    bad("alloc a size=4K banks=1,2,3,4,5\n", "t.trace:1: alloc: more than 4 entries in banks=");
    bad("alloc a size=4K priority=urgent\n",
        "t.trace:1: alloc: bad priority 'urgent' (minimum, low, normal, high, maximum or a 32-bit number)");
    bad("alloc a size=4K priority=0x100000000\n",
        "t.trace:1: alloc: bad priority '0x100000000' (minimum, low, normal, high, maximum or a 32-bit number)");
    bad("alloc a size=4K expect=NOPE\n", "t.trace:1: alloc: unknown status 'NOPE' for expect");
    bad("alloc 9a size=4K\n", "t.trace:1: alloc: bad allocation name '9a'");
    bad("client a/b\n", "t.trace:1: client: bad client name 'a/b'");
    bad("alloc a size=4K\nlock a flags=Readonly\n", "t.trace:2: lock: unknown lock flag 'Readonly'");
    bad("alloc a size=4K flags=CpuVisible\nwrite a pattern=0x100000000\n",
        "t.trace:2: write: pattern 0x100000000 is out of range (at most 4294967295)");
    bad("wait timeout=abc\n", "t.trace:1: wait: bad number 'abc' for timeout");
}

static void test_bad_references(void **state)
{
    (void)state;
    bad("resident nope\n", "t.trace:1: resident: unknown allocation 'nope'");
    bad("alloc a size=4K\ndestroy a\nresident a\n", "t.trace:3: resident: allocation 'a' was destroyed");
    bad("alloc a size=4K\nalloc a size=4K\n", "t.trace:2: alloc: allocation 'a' already exists (line 1)");
    bad("alloc a size=4K client=ghost\n", "t.trace:1: alloc: unknown client 'ghost'");
    bad("client c\nclient c\n", "t.trace:2: client: client 'c' already exists (line 1)");
    bad("client c\nexit c\nalloc a size=4K client=c\n", "t.trace:3: alloc: client 'c' has exited (line 1)");
    bad("client c\nexit c\nalloc a size=4K\n", "t.trace:3: alloc: no live client (every client has exited)");
    bad("client c\nclient d\nalloc a size=4K client=c\nresident a client=d\n",
        "t.trace:4: resident: client 'd' holds no handle to 'a'");
    bad("client c\nclient d\nalloc a size=4K client=c\nopen a client=d\n",
        "t.trace:4: open: 'a' was not created with kmt=CreateShared");
    bad("client c\nalloc a size=4K kmt=CreateResource,CreateShared\nopen a\n",
        "t.trace:3: open: missing client= (the client that opens it)");
    bad("client c\nalloc a size=4K kmt=CreateResource,CreateShared\nopen a client=c\n",
        "t.trace:3: open: client 'c' already holds a handle to 'a'");
    bad("alloc a size=4K\nalloc b size=4K\nresident a a\n", "t.trace:3: resident: 'a' named twice");
    bad("alloc a size=4K\nevict a\n", "t.trace:2: evict: 'a' is not resident for client 'default'");
    bad("alloc a size=4K\nresident a\nevict a\nevict a\n", "t.trace:4: evict: 'a' is not resident for client 'default'");
    bad("alloc a size=4K\nalloc b size=4K\nresident a\nsubmit\n copy a b\nend\n",
        "t.trace:5: copy: 'b' is not resident for client 'default'");
    bad("alloc a size=4K\nresident a\nsubmit\n fill a size=8K\nend\n",
        "t.trace:4: fill: offset + size = 8192 is past the end of 'a' (4096 bytes)");
    bad("alloc a size=4K\nresident a\nsubmit\n fill a offset=4K\nend\n",
        "t.trace:4: fill: offset 4096 is past the end of 'a' (4096 bytes)");
    bad("alloc a size=4K\nalloc b size=8K\nresident a b\nsubmit\n copy a b dst-offset=8K\nend\n",
        "t.trace:5: copy: dst-offset 8192 is past the end of 'b' (8192 bytes)");
    bad("alloc a size=4K flags=PermanentSysMem expect=RULE_PERMSYSMEM_NEEDS_CPUVISIBLE\nresident a\n",
        "t.trace:2: resident: allocation 'a' is expected not to be created (line 1)");
    bad("repeat 3 as i\n alloc a{i} size=4K\nend\nresident a3\n", "t.trace:4: resident: unknown allocation 'a3'");
    bad("repeat 3 as i\n alloc a{i} size=4K\n resident a{i+1}\nend\n",
        "t.trace:3: resident: unknown allocation 'a1' (i=0)");
}

/* The checker asks the library's predicates (gmc_check.h): an allocation
 * gmc_lock() accepts without CpuVisible (CpuVisibleOnDemand) passes, and an
 * NT-shared one may be opened like a global one. */
static void test_checker_follows_library(void **state)
{
    (void)state;
    struct trace *t = ok("alloc a size=4K flags=CpuVisibleOnDemand\nlock a\nwrite a\nunlock a\nread a\n");
    assert_int_equal(t->nops, 6);
    assert_int_equal(t->ops[2].kind, TR_LOCK);
    assert_int_equal(t->ops[5].kind, TR_READ);
    trace_free(t);
    t = ok("client c\nclient d\nalloc a size=4K client=c kmt=CreateResource,CreateShared,NtSecuritySharing\n"
           "open a client=d\n");
    assert_int_equal(t->ops[t->nops - 1].kind, TR_OPEN);
    trace_free(t);
    bad("alloc a size=4K flags=CpuVisibleOnDemand,HardwareProtected\nread a\n",
        "t.trace:2: read: 'a' is protected and is never mapped");
}

static void test_bad_state(void **state)
{
    (void)state;
    bad("alloc a size=4K\nlock a\n", "t.trace:2: lock: 'a' is not CpuVisible");
    bad("alloc a size=4K flags=CpuVisible,Protected\nlock a flags=ReadOnly\n",
        "t.trace:2: lock: 'a' is protected and is never mapped");
    bad("alloc a size=4K flags=CpuVisible kmt=ReadOnly\nlock a\n", "t.trace:2: lock: 'a' was created ReadOnly");
    bad("alloc a size=4K flags=CpuVisible kmt=ReadOnly\nwrite a\n", "t.trace:2: write: 'a' was created ReadOnly");
    bad("client c\nclient d\nalloc a size=4K client=c flags=CpuVisible kmt=CreateResource,CreateShared\n"
        "open a client=d\nlock a client=d\n",
        "t.trace:5: lock: 'a' is shared: only its creator 'c' locks it");
    bad("alloc a size=4K flags=CpuVisible\nlock a flags=ReadOnly,WriteOnly\n",
        "t.trace:2: lock: ReadOnly and WriteOnly exclude each other");
    bad("alloc a size=4K flags=CpuVisible\nlock a flags=Discard,ReadOnly\n",
        "t.trace:2: lock: ReadOnly and Discard exclude each other");
    bad("alloc a size=4K flags=CpuVisible\nlock a\nlock a\n", "t.trace:3: lock: 'a' is already locked (line 2)");
    bad("alloc a size=4K flags=CpuVisible\nunlock a\n", "t.trace:2: unlock: 'a' is not locked");
    bad("alloc a size=4K flags=CpuVisible\nlock a flags=ReadOnly\nwrite a\n",
        "t.trace:3: write: 'a' is locked ReadOnly (line 2)");
    bad("alloc a size=4K flags=CpuVisible\nlock a flags=WriteOnly\nread a\n",
        "t.trace:3: read: 'a' is locked WriteOnly (line 2)");
    bad("alloc a size=4K flags=CpuVisible\nwrite a offset=1K size=4K\n",
        "t.trace:2: write: offset + size = 5120 is past the end of 'a' (4096 bytes)");
    bad("alloc a size=4K flags=CpuVisible\nread a size=0\n", "t.trace:2: read: size must be at least 1");
    bad("standby\nresident x\n", "t.trace:2: resident: unknown allocation 'x'");
    bad("alloc a size=4K\nstandby\nresident a\n", "t.trace:3: resident: the device is in standby since line 2 (resume first)");
    bad("hibernate\nalloc a size=4K\n", "t.trace:2: alloc: the device is in hibernate since line 1 (resume first)");
    bad("standby\nhibernate\n", "t.trace:2: hibernate: the device is already in standby since line 1");
    bad("resume\n", "t.trace:1: resume: the device is not in standby or hibernate");
    bad("alloc a size=4K flags=CpuVisible\nlock a\nstandby\n", "t.trace:3: standby: 'a' is still locked (line 2)");
}

/* ------------------------------------------------- hostile input (issue 18) */

static void test_bare_word_twice(void **state)
{
    (void)state;
    bad("alloc a size=4K flags=CpuVisible\nread a verify verify\n", "t.trace:2: read: 'verify' given twice");
    bad("alloc a size=4K flags=CpuVisible\nread a verify verify verify verify verify\n",
        "t.trace:2: read: 'verify' given twice");
    char text[1024];
    int n = snprintf(text, sizeof(text), "alloc a size=4K flags=CpuVisible\nread a");
    for (int i = 0; i < 60; i++)
        n += snprintf(text + n, sizeof(text) - (size_t)n, " verify");
    snprintf(text + n, sizeof(text) - (size_t)n, "\n");
    bad(text, "t.trace:2: read: 'verify' given twice");
    bad("client c nonsecure nonsecure\n", "t.trace:1: client: 'nonsecure' given twice");
    bad("alloc a size=4K\nalloc b size=4K\nsubmit\nuse a write write\nend\n", "t.trace:4: use: 'write' given twice");
    /* once is still fine */
    struct trace *t = ok("alloc a size=4K flags=CpuVisible\nread a verify\n");
    assert_true(t->ops[2].verify);
    trace_free(t);
}

/* Keys of 60 to 64 characters: the longest that fits the lookup buffer
 * and the first that does not, both reported as unknown keys. */
static void test_long_keys(void **state)
{
    (void)state;
    for (int len = 58; len <= 66; len++) {
        char key[80], text[160], msg[200];
        memset(key, 'k', (size_t)len);
        key[len] = '\0';
        snprintf(text, sizeof(text), "alloc a size=4K %s=1\n", key);
        snprintf(msg, sizeof(msg), "t.trace:1: alloc: unknown key '%s'", key);
        bad(text, msg);
    }
}

/* Every arithmetic operation of an expression detects overflow and names
 * the line. */
static void test_expression_overflow(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        "-(-9223372036854775807-1)",         /* unary minus */
        "-9223372036854775807-1-1",           /* binary minus */
        "9223372036854775807+1",              /* plus */
        "4611686018427387904*2",              /* times */
        "-3037000500*3037000500",             /* times, negative */
        "(-9223372036854775807-1)/-1",        /* divide */
        "(-9223372036854775807-1)%-1",        /* remainder */
        "max(9223372036854775807,1)+1",       /* after a function */
        "-(-(-(-9223372036854775807-1)))",    /* nested */
    };
    for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
        char text[200];
        snprintf(text, sizeof(text), "seed 1\nalloc a size={%s}\n", exprs[i]);
        bad(text, "t.trace:2: expression: overflow");
    }
    /* the limits themselves are fine */
    struct trace *t = ok("alloc a size=4K\nrepeat {-(-9223372036854775807)-9223372036854775807+1}\nend\n"
                         "repeat {(-9223372036854775807-1)/-2-4611686018427387903}\nend\n");
    trace_free(t);
}

/* A copy inside one allocation whose ranges share bytes is refused (the
 * library says GMC_E_OVERLAP; docs/dma.md), unless a failure is expected. */
static void test_overlapping_copy(void **state)
{
    (void)state;
    const char *why = "overlap (the engine copies forward in bursts; an overlapping copy is refused with OVERLAP)";
    char msg[300];
    snprintf(msg, sizeof(msg), "t.trace:4: copy: the source and destination ranges of 'a' %s", why);
    bad("alloc a size=64K\nresident a\nsubmit\n copy a a src-offset=0 dst-offset=4K size=32K\nend\n", msg);
    bad("alloc a size=64K\nresident a\nsubmit\n copy a a src-offset=4K dst-offset=0 size=32K\nend\n", msg);
    bad("alloc a size=64K\nresident a\nsubmit\n copy a a\nend\n", msg);
    bad("alloc a size=64K\nresident a\nsubmit\n copy a a src-offset=100 dst-offset=131 size=32\nend\n", msg);
    struct trace *t = ok("alloc a size=64K\nresident a\nsubmit\n copy a a dst-offset=32K size=32K\nend\n"
                         "submit expect=OVERLAP\n copy a a dst-offset=4K size=32K\nend\n");
    assert_int_equal(t->ops[3].kind, TR_SUBMIT);
    assert_int_equal(t->ops[3].ops[0].dst_offset, 32768);
    assert_int_equal(t->ops[4].kind, TR_SUBMIT);
    assert_int_equal(t->ops[4].has_expect, 1);
    assert_int_equal(t->ops[4].expect, GMC_E_OVERLAP);
    trace_free(t);
}

/* Expansion work is bounded, not only the operations it creates. */
static void test_expansion_budget(void **state)
{
    (void)state;
    const char *budget = "the trace's expansion takes more than 8000000 steps (lines visited and loop iterations, "
                         "empty loops included)";
    char msg[300];
    snprintf(msg, sizeof(msg), "t.trace:2: %s", budget);
    bad("repeat 1000000\nrepeat 1000000\nend\nend\n", msg);
    snprintf(msg, sizeof(msg), "t.trace:3: %s", budget);
    bad("repeat 1000000\nrepeat 1000000\nrepeat 1000000\nend\nend\nend\n", msg);
    /* a wide loop of empty loops */
    snprintf(msg, sizeof(msg), "t.trace:2: %s", budget);
    bad("repeat 1000000\nrepeat 0\nend\nrepeat 0\nend\nrepeat 0\nend\nrepeat 0\nend\nrepeat 0\nend\nrepeat 0\nend\n"
        "repeat 0\nend\nrepeat 0\nend\nend\n",
        msg);
    /* a million operations still expand */
    struct trace *t = ok("alloc a size=4K flags=CpuVisible\nrepeat 999998\nwrite a size=1\nend\n");
    assert_int_equal(t->nops, 1000000);
    trace_free(t);
}

/* The forms a recording writes (docs/trace-format.md, "Recording"). */
static void test_recorded_forms(void **state)
{
    (void)state;
    struct trace *t = ok("client c1\nalloc a1 size=8K client=c1 segments=1 flags=CpuVisible\n"
                         "write a1 client=c1 offset=4 data=00ff10Ab\n"
                         "write a1 client=c1 offset=16 size=2 data=7e7f\n"
                         "read a1 client=c1 offset=4 size=4 hash=0x0123456789abcdef\n"
                         "wait fence=7 timeout=10\nwait\n"
                         "set-priority a1 priority=low client=c1\nset-priority a1 priority=0 expect=RULE_PRIORITY_ZERO\n");
    assert_int_equal(t->nops, 9);
    const struct tr_op *w = &t->ops[2];
    assert_int_equal(w->kind, TR_WRITE);
    assert_true(w->has_data);
    assert_int_equal(w->offset, 4);
    assert_int_equal(w->size, 4); /* the data's size */
    assert_int_equal(t->data_len, 6);
    static const uint8_t want[6] = { 0x00, 0xff, 0x10, 0xab, 0x7e, 0x7f };
    assert_memory_equal(t->data + w->data_off, want, 4);
    assert_memory_equal(t->data + t->ops[3].data_off, want + 4, 2);
    assert_true(t->ops[4].has_hash);
    assert_int_equal(t->ops[4].hash, 0x0123456789abcdefull);
    assert_true(t->ops[5].has_fence);
    assert_int_equal(t->ops[5].fence, 7);
    assert_int_equal(t->ops[5].timeout_us, 10);
    assert_false(t->ops[6].has_fence);
    assert_int_equal(t->ops[7].kind, TR_SET_PRIORITY);
    assert_int_equal(t->ops[7].priority, GMC_PRIORITY_LOW);
    assert_int_equal(t->ops[8].priority, 0);
    trace_free(t);

    const char *A = "alloc a size=8K flags=CpuVisible\n";
    char buf[256];
#define BAD2(line2, msg)                                         \
    do {                                                         \
        snprintf(buf, sizeof(buf), "%s%s\n", A, line2);          \
        bad(buf, msg);                                           \
    } while (0)
    BAD2("write a data=abc", "t.trace:2: write: data= needs two hex digits per byte (3 digits)");
    BAD2("write a data=zz", "t.trace:2: write: 'zz' in data= is not a hex byte");
    BAD2("write a size=3 data=0102", "t.trace:2: write: data= holds 2 bytes, size is 3");
    BAD2("write a data=01 pattern=1", "t.trace:2: write: data= and pattern= exclude each other");
    BAD2("write a data=@0", "t.trace:2: write: data=@0 without a 'data FILE' line");
    BAD2("write a data=@x", "t.trace:2: write: bad data offset '@x' (data=@OFFSET)");
    BAD2("write a data=", "t.trace:2: write: empty value for 'data'");
    BAD2("read a hash=12G3", "t.trace:2: read: bad number '12G3' for hash");
    BAD2("set-priority a", "t.trace:2: set-priority: missing priority=");
    BAD2("wait fence=x", "t.trace:2: wait: bad number 'x' for fence");
#undef BAD2
    bad("data /nonexistent/x.data\n", "t.trace:1: data: cannot read '/nonexistent/x.data': No such file or directory");
    bad("data /dev/zero\n", "t.trace:1: data: cannot read '/dev/zero': Invalid argument");
    bad("data a\ndata b\n", "t.trace:2: second 'data' line (first at line 1)");
    bad("repeat 2\ndata a\nend\n", "t.trace:2: 'data' inside a block");

    /* data=@OFFSET reads the data file beside the trace */
    char dir[] = "/tmp/gmc_test_trace.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof(p), "%s/w.data", dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    static const uint8_t bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_int_equal(fwrite(bytes, 1, 8, f), 8);
    fclose(f);
    snprintf(p, sizeof(p), "%s/w.trace", dir);
    f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "data w.data\n%swrite a offset=100 size=5 data=@3\n", A);
    fclose(f);
    char err[512];
    assert_int_equal(trace_load(p, 0, 0, &t, err, sizeof(err)), GMC_OK);
    assert_int_equal(t->ops[2].size, 5);
    assert_memory_equal(t->data + t->ops[2].data_off, bytes + 3, 5);
    trace_free(t);
    f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "data w.data\n%swrite a offset=100 size=6 data=@3\n", A);
    fclose(f);
    assert_int_equal(trace_load(p, 0, 0, &t, err, sizeof(err)), GMC_E_INVALID_ARG);
    char want_err[256];
    snprintf(want_err, sizeof(want_err),
             "%s:3: write: data=@3: 6 bytes from there are past the end of the data file (8 bytes)", p);
    assert_string_equal(err, want_err);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_file_errors(void **state)
{
    (void)state;
    char err[512];
    struct trace *t = (struct trace *)1;
    assert_int_equal(trace_load("/nonexistent/x.trace", 0, 0, &t, err, sizeof(err)), GMC_E_IO);
    assert_null(t);
    assert_string_equal(err, "/nonexistent/x.trace: cannot read: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal),          cmocka_unit_test(test_alloc_fields),
        cmocka_unit_test(test_repeat_and_expressions), cmocka_unit_test(test_rand_seed),
        cmocka_unit_test(test_locks_power_expect), cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_names_reused),     cmocka_unit_test(test_bad_syntax),
        cmocka_unit_test(test_bad_values),       cmocka_unit_test(test_bad_references),
        cmocka_unit_test(test_bad_state),        cmocka_unit_test(test_checker_follows_library),        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_bare_word_twice),  cmocka_unit_test(test_long_keys),
        cmocka_unit_test(test_expression_overflow), cmocka_unit_test(test_expansion_budget),
        cmocka_unit_test(test_overlapping_copy), cmocka_unit_test(test_recorded_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
