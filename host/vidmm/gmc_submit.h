/*
 * gmc_submit.h - submissions (gmc_submit.c). The entry point, gmc_submit,
 * is public (gmc.h); nothing in the library calls into this file: it is
 * the top of the residency code (gmc_submit -> gmc_resid -> gmc_fence ->
 * gmc_cand -> gmc_victim).
 */
#ifndef GMC_SUBMIT_H
#define GMC_SUBMIT_H

#include "gmc.h"

#endif /* GMC_SUBMIT_H */
