/*
 * gmc_check.h - the rules gmc's calls apply to CPU access, sharing and power
 * state, as pure predicates, and how the library reads an allocation's
 * priority and system memory.
 *
 * DOC: Overview
 *
 * Each gmc_check_ function that answers a status answers what the
 * corresponding call of gmc.h answers for the same inputs (GMC_OK when the
 * rule holds); the others read a description the way the library does. The library's own calls
 * use them, so a tool that checks a workload before running it (the gmc
 * command's trace checker, docs/trace-format.md) asks the same code the
 * library runs instead of a copy of its rules. They read their arguments
 * only: no device, no side effects, safe from any thread.
 *
 * What they do not cover is state a call finds on the device (an allocation
 * already locked, a fence not yet reached); the checker tracks that itself.
 */
#ifndef GMC_CHECK_H
#define GMC_CHECK_H

#include <stdint.h>

#include "gmc.h"

/* gmc_lock() of an allocation created with `desc` by a client that is
 * (by_creator != 0) or is not its creator, before any device state is
 * looked at: GMC_E_INVALID_ARG (unknown lock flags), GMC_E_LOCK_FLAGS
 * (ReadOnly with WriteOnly or Discard), GMC_E_NOT_CPU_VISIBLE (neither
 * CpuVisible, CpuVisibleOnDemand nor a primary), GMC_E_PROTECTED,
 * GMC_E_NOT_CREATOR (a CreateShared allocation is locked by its creator
 * only), GMC_E_READ_ONLY (kmt ReadOnly without a ReadOnly lock).
 * gmc_alloc_write()/gmc_alloc_read() without a lock apply it with
 * WriteOnly/ReadOnly. */
int gmc_check_lock(const struct gmc_alloc_desc *desc, uint32_t lock_flags, int by_creator);

/* gmc_lock_write() (writes != 0) or gmc_lock_read() through a lock taken
 * with lock_flags: GMC_E_PERMISSION for a write under ReadOnly or a read
 * under WriteOnly. */
int gmc_check_locked_access(uint32_t lock_flags, int writes);

/* How other clients open an allocation created with `desc`. */
enum gmc_share_kind {
    GMC_SHARE_NONE = 0,   /* not shared: gmc_alloc_open() never finds it */
    GMC_SHARE_GLOBAL = 1, /* CreateShared: its global handle (gmc_alloc_query().share_handle) */
    GMC_SHARE_NT = 2      /* CreateShared + NtSecuritySharing: gmc_alloc_share_nt() per client */
};
enum gmc_share_kind gmc_check_share_kind(const struct gmc_alloc_desc *desc);

/* gmc_device_power(to) (to STANDBY or HIBERNATE) or gmc_device_resume()
 * (to D0) from state `from` with `locked` allocations locked:
 * GMC_E_INVALID_ARG (no such state), GMC_E_POWER_STATE (power down from
 * anything but D0, resume in D0), GMC_E_LOCKED (a CPU mapping cannot
 * survive power-down). */
int gmc_check_power_change(enum gmc_power_state from, enum gmc_power_state to, unsigned locked);

/* Any other call that needs the device awake (allocation, residency,
 * submission, locks, counters) in state `s`: GMC_E_POWER_STATE unless D0. */
int gmc_check_powered(enum gmc_power_state s);

/* The priority an allocation created with `desc` is evicted by and
 * gmc_alloc_query() reports: umd_priority with GMC_INFO2_OVERRIDE_PRIORITY,
 * else priority. */
uint32_t gmc_check_priority(const struct gmc_alloc_desc *desc);

/* Whether an allocation created with `desc` lives in system memory its
 * creator provides (desc.system_mem): GMC_ALLOC_EXISTING_SYS_MEM,
 * GMC_ALLOC_EXISTING_KERNEL_SYS_MEM or GMC_KMT_EXISTING_SYS_MEM. */
int gmc_check_existing_sys_mem(const struct gmc_alloc_desc *desc);

/* gmc_alloc_pin_direct_flip() on an allocation whose supported set meets
 * the device's DirectFlip segments in `direct_flip` (0: none), pinned for
 * DirectFlip already or not, device in state `s`: GMC_E_NOT_DIRECT_FLIP
 * when `direct_flip` is 0, GMC_OK at once when already pinned (nothing to
 * do, whatever the power state), else gmc_check_powered(s). Placement
 * (GMC_E_PINNED, GMC_E_LOCKED, GMC_E_NO_SPACE) is the device's to decide. */
int gmc_check_flip_pin(uint32_t direct_flip, int pinned, enum gmc_power_state s);

/* gmc_alloc_unpin_direct_flip(): GMC_E_BAD_STATE unless it is pinned for
 * DirectFlip. */
int gmc_check_flip_unpin(int pinned);

#endif /* GMC_CHECK_H */
