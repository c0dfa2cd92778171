/* SPDX-License-Identifier: MIT */
/*
 * failure.h: what the device says of a failed job, for host-program
 * runs (failure.c).
 */
#ifndef LOOM_FAILURE_H
#define LOOM_FAILURE_H

#include "device_internal.h"

/*
 * Reads @token's JOB_INFO record and state dump into @st's job_status,
 * job_detail, fault_va, waiting_tiles and blocked_tiles; a fabric of more
 * than @tiles tiles, or a record the driver does not give (a spread
 * launch's, a ring launch's not yet reaped, an expired job), leaves them
 * as they are.  The report is best effort: it never fails the run.
 */
void loom_job_failure_read(struct loom_token *token, unsigned tiles,
			   struct loom_host_stats *st);

#endif /* LOOM_FAILURE_H */
