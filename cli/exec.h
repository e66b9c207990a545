/*
 * exec.h - run an expanded trace on a device and record its timeline.
 */
#ifndef GMC_CLI_EXEC_H
#define GMC_CLI_EXEC_H

#include <stdio.h>

#include "timeline.h"
#include "trace.h"

enum exec_progress { EXEC_PROGRESS_NONE, EXEC_PROGRESS_TTY, EXEC_PROGRESS_PLAIN };

struct exec_opts {
    const char *device;   /* device string (already chosen: option, trace, "sim") */
    const char *fst;      /* waveform path or NULL */
    uint64_t win_start, win_end; /* cycle window (end 0: to the end) */
    int progress;         /* enum exec_progress, to stderr */
    int keep_going;       /* continue after an unexpected status */
    FILE *log;            /* decision log (the digest's input), or NULL */
};

/*
 * Exit codes of exec_run: 0 every operation answered what the trace
 * expects; 1 an operation answered something else (tl->first_error says
 * which; the run stopped there unless keep_going); 2 nothing ran (the
 * device did not open, or an allocation breaks a rule for this device's
 * segments: err says why). The timeline is filled in every case but 2.
 */
int exec_run(const struct trace *t, const struct exec_opts *o, struct timeline *tl, char *err, size_t errlen);

#endif
