/*
 * gmc_record.h - recording a program's calls as a gmc trace (gmc_record.c;
 * private to the host library; docs/trace-format.md, "Recording").
 *
 * The public entry points call these after they have done their work,
 * with the status they answer; each writes the trace line (or the comment
 * saying why the call cannot be expressed) when the device records, and
 * does nothing otherwise. They never change what the call did or
 * answered: a failed write of the trace is kept until
 * gmc_device_record(dev, NULL, 0) reports it. They call nothing of the
 * manager.
 */
#ifndef GMC_RECORD_H
#define GMC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "gmc.h"

/* Start recording dev to path (gmc_device_record's checks); stop it and
 * report a failed write; start it from GMC_RECORD / GMC_RECORD_OPTIONS
 * (GMC_OK when the variable is not set). */
int gmc_rec_start(gmc_device *dev, const char *path, uint32_t flags);
int gmc_rec_stop(gmc_device *dev);
int gmc_rec_start_env(gmc_device *dev);
/* Free the recorder without a status (gmc_device_close). */
void gmc_rec_free(gmc_device *dev);

/* Calls made inside another public call (gmc_alloc_read's lock) are not
 * recorded: +1 before, -1 after. */
void gmc_rec_mute(gmc_device *dev, int delta);

void gmc_rec_client_create(gmc_device *dev, const struct gmc_client_desc *desc, const gmc_client *c, int st);
/* Before the client is freed. */
void gmc_rec_client_destroy(const gmc_client *c);
void gmc_rec_alloc_create(const gmc_client *c, const struct gmc_alloc_desc *d, gmc_handle h, uint64_t global,
                          int st);
void gmc_rec_alloc_destroy(const gmc_client *c, gmc_handle h, int st);
void gmc_rec_set_priority(const gmc_client *c, gmc_handle h, uint32_t priority, int st);
void gmc_rec_share_nt(const gmc_client *c, gmc_handle h, const gmc_client *target, gmc_share_handle sh, int st);
void gmc_rec_open(const gmc_client *c, gmc_share_handle sh, gmc_handle h, int st);
/* make_resident (evict 0) or evict (1); trim: bytes to trim of an OVER_BUDGET. */
void gmc_rec_residency(const gmc_client *c, int evict, const gmc_handle *h, unsigned n, uint64_t trim, int st);
void gmc_rec_callback(const gmc_client *c, int set);

enum gmc_rec_budget_kind { GMC_REC_BUDGET = 0, GMC_REC_RESERVE = 1, GMC_REC_APP_BUDGET = 2 };
/* c is NULL for GMC_REC_APP_BUDGET. */
void gmc_rec_budget(gmc_device *dev, const gmc_client *c, int kind, uint32_t group, uint64_t bytes, int st);
void gmc_rec_flip(const gmc_client *c, gmc_handle h, int pin, int st);
void gmc_rec_submit(const gmc_client *c, const struct gmc_submit *s, uint64_t fence, int st);
void gmc_rec_wait(gmc_device *dev, uint64_t fence, uint64_t timeout_us, int st);
void gmc_rec_lock(const gmc_client *c, gmc_handle h, uint32_t flags, int st);
void gmc_rec_unlock(const gmc_client *c, gmc_handle h, int st);
/* gmc_lock_read/write (via_lock 1) and gmc_alloc_read/write (0). */
void gmc_rec_access(const gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len, int write,
                    int via_lock, int st);
/* to: GMC_POWER_D0 for a resume. */
void gmc_rec_power(gmc_device *dev, int to, int st);
void gmc_rec_waveform(gmc_device *dev, int st);

#endif /* GMC_RECORD_H */
