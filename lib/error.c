// SPDX-License-Identifier: MIT
/*
 * DOC: error strings
 *
 * loom_strerror(): one sentence for every result libloom returns, the
 * dynamic-work core's and the device runtime's (enum loom_error in
 * <loom/error.h>).  Pure: the dynamic-work core links it without a device.
 */
#define _GNU_SOURCE	/* strerrordesc_np() */
#include <string.h>

#include "loom/error.h"
#include "loom_format.h"

/* format/ returns its own codes; libloom passes them on as its own. */
_Static_assert(LOOM_FORMAT_BAD_IMAGE == (int)LOOM_E_BAD_IMAGE,
	       "format/'s BAD_IMAGE is libloom's");
_Static_assert(LOOM_FORMAT_BAD_CONFIG == (int)LOOM_E_BAD_CONFIG,
	       "format/'s BAD_CONFIG is libloom's");
_Static_assert(LOOM_FORMAT_DUPLICATE_THREAD == (int)LOOM_E_DUPLICATE_THREAD,
	       "format/'s DUPLICATE_THREAD is libloom's");

static const struct {
	int err;
	const char *msg;
} loom_errors[] = {
	/* the device runtime */
	{ LOOM_E_EXTENT_COUNT, "extent count differs from the thread's rank" },
	{ LOOM_E_NEGATIVE_EXTENT, "negative extent" },
	{ LOOM_E_ARG_COUNT, "argument count differs from the thread's signature" },
	{ LOOM_E_ARG_TYPE, "argument type differs from the thread's signature" },
	{ LOOM_E_DOMAIN_KIND, "wrong domain kind for this launch" },
	{ LOOM_E_NO_THREAD, "no such thread in the image" },
	{ LOOM_E_BAD_IMAGE, "malformed program image" },
	{ LOOM_E_FABRIC_MISMATCH, "image built for another fabric size or more PE slots" },
	{ LOOM_E_NO_DEVICE, "no such loom device" },
	{ LOOM_E_RANK_LIMIT, "rank above the device's limit" },
	{ LOOM_E_NOT_SUPPORTED, "the driver lacks a needed feature" },
	{ LOOM_E_FOREIGN_TOKEN, "dependency token of another device" },
	{ LOOM_E_JOB_EXPIRED, "the driver no longer remembers the job" },
	{ LOOM_E_BAD_CONFIG, "malformed fabric configuration" },
	{ LOOM_E_DUPLICATE_THREAD, "thread name already used" },
	{ LOOM_E_CHECK_FAILED, "a loom.check of the host program failed" },
	{ LOOM_E_NO_HOST_FUNC, "no such host function in the image" },
	{ LOOM_E_WORK_FAILED, "a dynamic-work run of the host program failed" },
	{ LOOM_E_HOST_FAULT, "host program access outside its buffers" },
	{ LOOM_E_UNSUPPORTED_PAYLOAD, "work-item payload type the runtime cannot carry" },
	{ LOOM_E_NO_DYNAMIC_WORK, "the device lacks the capability to run dynamic work" },
	{ LOOM_E_SITE_NAME, "bad launch-site name: empty, too long, or not [A-Za-z0-9_.-]" },
	{ LOOM_E_SITE_EXISTS, "the image already has a launch site of that name" },
	{ LOOM_E_NO_LAUNCH_SITE, "no launch of that ordinal in the host function" },
	{ LOOM_E_POINT_OUTSIDE, "coordinate outside the launch's extents" },
	{ LOOM_E_SITE_MISMATCH, "the launch site is not one of the launch's image and thread" },
	{ LOOM_E_CAPTURE_NOT_SHARED, "a memref capture is not in a BO shared with every device of the run" },
	{ LOOM_E_CAPTURE_MISMATCH, "the devices' captures are not one capture list" },
	{ LOOM_E_BAD_VIEW, "a memref operand's view has a negative size or an extent beyond 64 bits" },
	{ LOOM_E_VIEW_OUTSIDE, "a memref operand's view lies outside its buffer object" },
	/* the dynamic-work core */
	{ LOOM_WORK_INVALID_ARGUMENT, "invalid argument" },
	{ LOOM_WORK_OUT_OF_MEMORY, "out of memory" },
	{ LOOM_WORK_ROOT_CLOSED, "the root source is closed: the root was already admitted" },
	{ LOOM_WORK_FOREIGN_DOMAIN, "the responsibility belongs to another domain" },
	{ LOOM_WORK_RESP_INVALID, "not a responsibility of this domain" },
	{ LOOM_WORK_RESP_USED, "the responsibility was already retired" },
	{ LOOM_WORK_PARENT_RETIRED, "the parent item was already retired" },
	{ LOOM_WORK_ORDINALS_EXHAUSTED, "the parent's child ordinals are exhausted" },
	{ LOOM_WORK_WOULD_BLOCK, "the worker's deque cannot take the whole group" },
	{ LOOM_WORK_WORKER_BUSY, "the worker already holds an active item" },
	{ LOOM_WORK_NO_WORK, "no item is queued" },
	{ LOOM_WORK_DOMAIN_COMPLETE, "the domain has completed" },
	{ LOOM_WORK_NOT_ACTIVE, "the item is not active on that worker" },
	{ LOOM_WORK_CANCEL_REQUESTED, "the item's cancellation was requested; cancel it" },
	{ LOOM_WORK_CANCEL_PENDING, "the item's cancellation was already requested" },
	{ LOOM_WORK_NO_CANCEL_REQUEST, "no cancellation of the item was requested" },
	{ LOOM_WORK_QUEUE_CAPACITY, "an item's children did not fit its worker's deque" },
	{ LOOM_WORK_CHILD_OVERFLOW, "an item reported more children than the child capacity" },
	{ LOOM_WORK_CALLBACK_ABORTED, "an item's callback aborted the domain" },
	{ LOOM_WORK_DEVICE_ERROR, "a device launch or job of the run failed" },
	{ LOOM_WORK_PAYLOAD_WIDTH, "a work-item payload does not fit the thread's payload type" },
	{ LOOM_WORK_CANCEL_CHILDREN, "an item's callback cancelled it but also reported children" },
	{ LOOM_WORK_INCOMPLETE, "the run stopped on its budget before the domain completed" },
	{ LOOM_WORK_OCCURRENCES_EXHAUSTED, "the process has no dispatch occurrence left to mint" },
};

const char *loom_strerror(int err)
{
	if (err == 0)
		return "success";
	for (size_t i = 0; i < sizeof(loom_errors) / sizeof(loom_errors[0]); i++)
		if (loom_errors[i].err == err)
			return loom_errors[i].msg;
	/* strerror() is not thread-safe for unknown values; those are ours */
	if (err < 0 && err > -4096)
		return strerrordesc_np(-err) ? strerrordesc_np(-err) : "unknown errno";
	return "unknown error";
}
