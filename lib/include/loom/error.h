/* SPDX-License-Identifier: MIT */
/*
 * DOC: libloom's errors
 *
 * enum loom_error and loom_strerror(): the one error type of the
 * dynamic-work core (<loom/work.h>) and the device runtime (<loom/loom.h>),
 * which both include this header.  Pure: no device, no I/O.
 */
#ifndef LOOM_ERROR_H
#define LOOM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * libloom's one error type, for the dynamic-work core and the device
 * runtime alike: 0 is success, failures are negative.  -4095..-1 are
 * -errno values (from the driver or libc, device runtime only); the typed
 * errors lie below -4096 so the two never overlap: the device runtime's
 * LOOM_E_* from -4097, the dynamic-work core's LOOM_WORK_* from -4129.
 *
 * A dynamic-work call that fails changes nothing: no responsibility is
 * acquired or retired, no ordinal is used, no item moves and no trace
 * event is recorded.  (loom_work_sync_run() is a whole run, not one
 * transaction; it documents its own failures.)
 */
enum loom_error {
	LOOM_OK = 0,
	/* the dynamic-work core */
	LOOM_WORK_INVALID_ARGUMENT = -4129,	/* NULL pointer, zero size, worker out of range */
	LOOM_WORK_OUT_OF_MEMORY = -4130,
	LOOM_WORK_ROOT_CLOSED = -4131,		/* the root was already admitted */
	LOOM_WORK_FOREIGN_DOMAIN = -4132,	/* the responsibility belongs to another domain */
	LOOM_WORK_RESP_INVALID = -4133,		/* not a responsibility this domain issued */
	LOOM_WORK_RESP_USED = -4134,		/* the responsibility was already retired */
	LOOM_WORK_PARENT_RETIRED = -4135,	/* spawn or publish from a retired item */
	LOOM_WORK_ORDINALS_EXHAUSTED = -4136,	/* the parent's ordinals cannot cover the group */
	LOOM_WORK_WOULD_BLOCK = -4137,		/* the worker's deque cannot take the whole group */
	LOOM_WORK_WORKER_BUSY = -4138,		/* the worker already holds an active item */
	LOOM_WORK_NO_WORK = -4139,		/* nothing is queued now; the domain is not complete */
	LOOM_WORK_DOMAIN_COMPLETE = -4140,	/* the domain completed; nothing will be queued again */
	LOOM_WORK_NOT_ACTIVE = -4141,		/* the item is not active on the worker named */
	LOOM_WORK_CANCEL_REQUESTED = -4142,	/* completion/publication blocked: cancel the item */
	LOOM_WORK_CANCEL_PENDING = -4143,	/* a cancellation was already requested */
	LOOM_WORK_NO_CANCEL_REQUEST = -4144,	/* cancel_active on an item nobody asked to cancel */
	LOOM_WORK_QUEUE_CAPACITY = -4145,	/* adapter: an item's children did not fit its deque */
	LOOM_WORK_CHILD_OVERFLOW = -4146,	/* adapter: more children than child_capacity */
	LOOM_WORK_CALLBACK_ABORTED = -4147,	/* adapter: the callback asked to abort the domain */
	LOOM_WORK_DEVICE_ERROR = -4148,		/* device adapter: a launch or job failed */
	LOOM_WORK_PAYLOAD_WIDTH = -4149,	/* adapter: a payload does not fit the thread's payload type */
	LOOM_WORK_CANCEL_CHILDREN = -4150,	/* adapter: a cancel verdict also reported children */
	LOOM_WORK_INCOMPLETE = -4151,		/* adapter: the run stopped on its budget */
	LOOM_WORK_OCCURRENCES_EXHAUSTED = -4152,/* the process minted its last dispatch occurrence */
	/* the device runtime (<loom/loom.h>) */
	LOOM_E_EXTENT_COUNT = -4097,	/* extents given != the thread's rank */
	LOOM_E_NEGATIVE_EXTENT = -4098,	/* an extent is below zero */
	LOOM_E_ARG_COUNT = -4099,	/* args given != the thread's arguments */
	LOOM_E_ARG_TYPE = -4100,	/* an arg's type differs from the signature */
	LOOM_E_DOMAIN_KIND = -4101,	/* dense launch of a dynamic-work thread,
					   or items launch of a dense one */
	LOOM_E_NO_THREAD = -4102,	/* no thread of that name in the image */
	LOOM_E_BAD_IMAGE = -4103,	/* the image is malformed */
	LOOM_E_FABRIC_MISMATCH = -4104,	/* image fabric size != the device's, or
					   more slots per PE than it has */
	LOOM_E_NO_DEVICE = -4105,	/* no (such) loom device node */
	LOOM_E_RANK_LIMIT = -4106,	/* rank above the device's HW_LIMITS */
	LOOM_E_NOT_SUPPORTED = -4107,	/* the driver lacks a needed feature
					   (a device capability for dynamic
					   work is LOOM_E_NO_DYNAMIC_WORK) */
	LOOM_E_FOREIGN_TOKEN = -4108,	/* a dependency token of another device */
	LOOM_E_JOB_EXPIRED = -4109,	/* the driver no longer knows the job */
	LOOM_E_BAD_CONFIG = -4110,	/* builder: a fabric configuration is malformed */
	LOOM_E_DUPLICATE_THREAD = -4111,/* builder: the name is already used */
	LOOM_E_CHECK_FAILED = -4112,	/* host program: a loom.check failed */
	LOOM_E_NO_HOST_FUNC = -4113,	/* no host function of that name */
	LOOM_E_WORK_FAILED = -4114,	/* host program: a dynamic-work run
					   failed without a device error */
	LOOM_E_HOST_FAULT = -4115,	/* host program: a load or store
					   outside every buffer it allocated */
	LOOM_E_UNSUPPORTED_PAYLOAD = -4116,/* a dynamic-work thread's payload type
					   is not one the runtime carries
					   (i32, i64, index) */
	LOOM_E_NO_DYNAMIC_WORK = -4117,	/* the device lacks the capability a
					   dynamic-work launch needs
					   (LOOM_CAP_ITEMS) */
	LOOM_E_SITE_NAME = -4118,	/* a launch-site name is empty, too long
					   or has a character outside
					   [A-Za-z0-9_.-] */
	LOOM_E_SITE_EXISTS = -4119,	/* the image already has a launch site
					   of that name */
	LOOM_E_NO_LAUNCH_SITE = -4120,	/* the host function has no launch of
					   that ordinal */
	LOOM_E_POINT_OUTSIDE = -4121,	/* a coordinate lies outside its
					   extent */
	LOOM_E_SITE_MISMATCH = -4122,	/* a launch's site is not one of its
					   image and thread */
	LOOM_E_CAPTURE_NOT_SHARED = -4123,/* a memref capture of a run on several
					   devices lies in no BO shared
					   (loom_bo_share()) with one of them */
	LOOM_E_CAPTURE_MISMATCH = -4124,/* per-device captures (device_args)
					   that are not one capture list:
					   a scalar or type differs, or a
					   memref is not the shared BO's */
	LOOM_E_BAD_VIEW = -4125,	/* a memref operand's view has a
					   negative size, or an extent beyond
					   64 bits */
	LOOM_E_VIEW_OUTSIDE = -4126,	/* a memref operand's view addresses
					   memory outside the BO it starts in,
					   or starts in none */
};

/*
 * A constant English sentence for any libloom result: 0, a -errno or a
 * typed error; never NULL.
 */
const char *loom_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ERROR_H */
