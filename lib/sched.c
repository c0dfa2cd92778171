// SPDX-License-Identifier: MIT
/*
 * sched.c: the bounded work-stealing scheduler and its replay trace.
 *
 * Every queued or active item holds one responsibility of the scheduler's
 * domain; the scheduler only decides where an item waits and who runs it,
 * and asks the kernel (work.c) for every admission, spawn and retirement.
 * All state here is guarded by the domain's mutex, so a transition -- the
 * kernel transaction, the deque change and its trace event -- is atomic.
 * Each transition checks every precondition and allocates everything it
 * needs before it changes anything, so a failure leaves no trace.
 *
 * Only admission and publication allocate.  They also reserve trace room
 * for every event their items can still cause (acquisition, cancellation
 * request, retirement), so acquiring, completing and cancelling never fail
 * for memory and a cancelled domain can always drain.
 */
#include <stdlib.h>
#include <string.h>

#include "work_internal.h"

/* An item waiting on a deque. */
struct queued_item {
	uint64_t serial;
	uint64_t payload;
};

/* An item a worker is running. */
struct active_item {
	uint64_t serial;
	uint64_t payload;
	bool cancel_requested;
	bool retired;			/* a hole until the batch is done */
};

struct sched_worker {
	struct queued_item *deque;	/* ring of sched->capacity slots */
	uint32_t front;			/* slot of the oldest item */
	uint32_t count;
	struct active_item *active;	/* max_batch slots, acquisition order */
	uint32_t nactive;		/* live ones among active[first, end) */
	uint32_t first, end;
};

/*
 * Invariant: cap >= count + promised, where promised counts the events live
 * items may still record (EVENTS_PER_ITEM each, given back as they are
 * recorded or become impossible).
 */
struct event_log {
	struct loom_sched_event *events;
	size_t count;
	size_t cap;
	size_t promised;
};

/* After its creation an item records: acquire, cancel request, retirement. */
#define EVENTS_PER_ITEM		3

struct loom_sched {
	struct loom_work_domain *domain;	/* owned; its lock guards all below */
	pthread_cond_t work_changed;	/* an item was queued or the domain completed */
	uint32_t waiters;		/* threads blocked on work_changed */
	uint32_t nworkers;
	uint32_t capacity;
	uint32_t max_batch;
	bool tracing;
	uint64_t queued;		/* items on all deques */
	struct sched_worker *workers;
	struct event_log log;
};

struct loom_sched_trace {
	struct loom_sched_event *events;
	size_t count;
	struct loom_work_domain *domain;	/* a reference: keeps the ids valid */
};

/* -------------------------------------------------------------- deques --- */

static struct queued_item *deque_slot(const struct loom_sched *sched,
				      struct sched_worker *w, uint32_t i)
{
	return &w->deque[((uint64_t)w->front + i) % sched->capacity];
}

static void deque_push_back(struct loom_sched *sched, struct sched_worker *w,
			    struct queued_item item)
{
	*deque_slot(sched, w, w->count) = item;
	w->count++;
	sched->queued++;
}

static struct queued_item deque_pop_back(struct loom_sched *sched,
					 struct sched_worker *w)
{
	w->count--;
	sched->queued--;
	return *deque_slot(sched, w, w->count);
}

static struct queued_item deque_pop_front(struct loom_sched *sched,
					  struct sched_worker *w)
{
	struct queued_item item = w->deque[w->front];

	w->front = (w->front + 1) % sched->capacity;
	w->count--;
	sched->queued--;
	return item;
}

/* Removes the @i-th item from the front, keeping the others in order. */
static void deque_remove(struct loom_sched *sched, struct sched_worker *w,
			 uint32_t i)
{
	for (; i + 1 < w->count; i++)
		*deque_slot(sched, w, i) = *deque_slot(sched, w, i + 1);
	w->count--;
	sched->queued--;
}

static struct active_item *find_active(struct sched_worker *w, uint64_t serial)
{
	for (uint32_t i = w->first; i < w->end; i++)
		if (!w->active[i].retired && w->active[i].serial == serial)
			return &w->active[i];
	return NULL;
}

/*
 * A batch is acquired only by a worker with nothing active and usually
 * retires in acquisition order: leaving holes and skipping the leading
 * ones keeps each retirement O(1) where closing the gap made a batch
 * quadratic.
 */
static void remove_active(struct sched_worker *w, struct active_item *slot)
{
	slot->retired = true;
	w->nactive--;
	while (w->first < w->end && w->active[w->first].retired)
		w->first++;
	if (!w->nactive)
		w->first = w->end = 0;
}

/* -------------------------------------------------------- trace log --- */

static enum loom_error log_grow(struct event_log *log, size_t need)
{
	struct loom_sched_event *events;
	size_t cap = log->cap ? log->cap : 64;

	if (need <= log->cap)
		return LOOM_WORK_OK;
	while (cap < need)
		cap *= 2;
	events = realloc(log->events, cap * sizeof(*events));
	if (!events)
		return LOOM_WORK_OUT_OF_MEMORY;
	log->events = events;
	log->cap = cap;
	return LOOM_WORK_OK;
}

/*
 * Room for the creation events of @items new items and for everything they
 * may record later.  Call before creating them; then log_promise().
 */
static enum loom_error log_reserve_items(struct loom_sched *sched,
					      size_t items)
{
	struct event_log *log = &sched->log;

	if (!sched->tracing)
		return LOOM_WORK_OK;
	if (items > (SIZE_MAX - log->count - log->promised) /
		    (EVENTS_PER_ITEM + 1) / sizeof(*log->events))
		return LOOM_WORK_OUT_OF_MEMORY;
	return log_grow(log, log->count + log->promised +
			     items * (EVENTS_PER_ITEM + 1));
}

static void log_promise(struct loom_sched *sched, size_t items)
{
	if (sched->tracing)
		sched->log.promised += items * EVENTS_PER_ITEM;
}

/* Events an item was promised that it can no longer record. */
static void log_release(struct loom_sched *sched, size_t events)
{
	if (sched->tracing)
		sched->log.promised -= events;
}

/*
 * Records an event.  Creation events (admit, publish) use the room
 * log_reserve_items() made; the others use an item's promise.
 */
static void log_event(struct loom_sched *sched, enum loom_sched_event_kind kind,
		      uint32_t worker, uint32_t other, uint64_t serial,
		      enum loom_work_status after)
{
	struct event_log *log = &sched->log;

	if (!sched->tracing)
		return;
	if (kind != LOOM_SCHED_EV_ADMIT && kind != LOOM_SCHED_EV_PUBLISH)
		log->promised--;
	log->events[log->count++] = (struct loom_sched_event){
		.kind = kind,
		.worker = worker,
		.other_worker = other,
		.completes_domain = after == LOOM_WORK_COMPLETED,
		.item = loom_work_id_locked(sched->domain, serial),
	};
}

const char *loom_sched_event_name(enum loom_sched_event_kind kind)
{
	switch (kind) {
	case LOOM_SCHED_EV_ADMIT:
		return "admit";
	case LOOM_SCHED_EV_ACQUIRE_LOCAL:
		return "acquire-local";
	case LOOM_SCHED_EV_STEAL:
		return "steal";
	case LOOM_SCHED_EV_PUBLISH:
		return "publish";
	case LOOM_SCHED_EV_CANCEL_REQUEST:
		return "cancel-request";
	case LOOM_SCHED_EV_CANCEL_QUEUED:
		return "cancel-queued";
	case LOOM_SCHED_EV_CANCEL_ACTIVE:
		return "cancel-active";
	case LOOM_SCHED_EV_COMPLETE:
		return "complete";
	}
	return "unknown";
}

/* ---------------------------------------------------------- lifecycle --- */

static void free_workers(struct loom_sched *sched)
{
	if (!sched->workers)
		return;
	for (uint32_t i = 0; i < sched->nworkers; i++) {
		free(sched->workers[i].deque);
		free(sched->workers[i].active);
	}
	free(sched->workers);
}

static enum loom_error alloc_workers(struct loom_sched *sched)
{
	sched->workers = calloc(sched->nworkers, sizeof(*sched->workers));
	if (!sched->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < sched->nworkers; i++) {
		struct sched_worker *w = &sched->workers[i];

		w->deque = calloc(sched->capacity, sizeof(*w->deque));
		w->active = calloc(sched->max_batch, sizeof(*w->active));
		if (!w->deque || !w->active)
			return LOOM_WORK_OUT_OF_MEMORY;
	}
	return LOOM_WORK_OK;
}

enum loom_error loom_sched_create(const struct loom_sched_config *config,
				       struct loom_sched **out)
{
	struct loom_sched *sched;
	enum loom_error err;

	if (!config || !out || !config->workers || !config->deque_capacity ||
	    config->workers == LOOM_SCHED_NO_WORKER)
		return LOOM_WORK_INVALID_ARGUMENT;
	sched = calloc(1, sizeof(*sched));
	if (!sched)
		return LOOM_WORK_OUT_OF_MEMORY;
	sched->nworkers = config->workers;
	sched->capacity = config->deque_capacity;
	sched->max_batch = config->max_batch ? config->max_batch : 1;
	sched->tracing = !(config->flags & LOOM_SCHED_NO_TRACE);
	err = alloc_workers(sched);
	if (!err)
		err = loom_work_domain_create(config->occurrence, &sched->domain);
	if (!err && pthread_cond_init(&sched->work_changed, NULL)) {
		loom_work_domain_put(sched->domain);
		err = LOOM_WORK_OUT_OF_MEMORY;
	}
	if (err) {
		free_workers(sched);
		free(sched);
		return err;
	}
	*out = sched;
	return LOOM_WORK_OK;
}

void loom_sched_destroy(struct loom_sched *sched)
{
	if (!sched)
		return;
	free_workers(sched);
	free(sched->log.events);
	pthread_cond_destroy(&sched->work_changed);
	loom_work_domain_put(sched->domain);
	free(sched);
}

const struct loom_work_domain *loom_sched_domain(const struct loom_sched *sched)
{
	return sched->domain;
}

uint32_t loom_sched_queued(const struct loom_sched *sched, uint32_t worker)
{
	uint32_t count = 0;

	loom_work_lock(sched->domain);
	if (worker < sched->nworkers)
		count = sched->workers[worker].count;
	loom_work_unlock(sched->domain);
	return count;
}

/* ------------------------------------------------------ transitions --- */

static bool domain_completed(const struct loom_sched *sched)
{
	return sched->domain->root_admitted && sched->domain->active == 0;
}

/*
 * @n items were queued: wake as many waiting workers.  Called with the lock
 * held, so a worker about to wait cannot miss it.
 */
static void wake_for_items(struct loom_sched *sched, size_t n)
{
	if (n >= sched->waiters) {
		if (sched->waiters)
			pthread_cond_broadcast(&sched->work_changed);
		return;
	}
	while (n--)
		pthread_cond_signal(&sched->work_changed);
}

/* A retirement happened: on completion, every waiter must return. */
static void after_retirement(struct loom_sched *sched,
			     enum loom_work_status after)
{
	if (after == LOOM_WORK_COMPLETED && sched->waiters)
		pthread_cond_broadcast(&sched->work_changed);
}

enum loom_error loom_sched_admit(struct loom_sched *sched,
				      uint64_t payload,
				      struct loom_work_resp *root)
{
	enum loom_error err;
	uint64_t serial;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(sched->domain);
	err = log_reserve_items(sched, 1);
	if (!err)
		err = loom_work_admit_locked(sched->domain, &serial);
	if (!err) {
		log_promise(sched, 1);
		/* Nothing is queued before the root, and capacity >= 1. */
		deque_push_back(sched, &sched->workers[0],
				(struct queued_item){ serial, payload });
		log_event(sched, LOOM_SCHED_EV_ADMIT, 0, LOOM_SCHED_NO_WORKER,
			  serial, LOOM_WORK_ACTIVE);
		wake_for_items(sched, 1);
		if (root)
			*root = loom_work_resp_of(sched->domain, serial);
	}
	loom_work_unlock(sched->domain);
	return err;
}

/* The policy: own deque's back, else the next non-empty deque's front. */
static bool take_one(struct loom_sched *sched, uint32_t worker,
		     struct loom_sched_item *item)
{
	struct sched_worker *own = &sched->workers[worker];
	uint32_t victim = LOOM_SCHED_NO_WORKER;
	struct queued_item q;

	if (own->count) {
		q = deque_pop_back(sched, own);
	} else {
		for (uint32_t i = 1; i < sched->nworkers; i++) {
			uint32_t v = (worker + i) % sched->nworkers;

			if (sched->workers[v].count) {
				victim = v;
				break;
			}
		}
		if (victim == LOOM_SCHED_NO_WORKER)
			return false;
		q = deque_pop_front(sched, &sched->workers[victim]);
	}
	own->active[own->end++] = (struct active_item){ q.serial, q.payload,
							false, false };
	own->nactive++;
	log_event(sched, victim == LOOM_SCHED_NO_WORKER ?
		  LOOM_SCHED_EV_ACQUIRE_LOCAL : LOOM_SCHED_EV_STEAL,
		  worker, victim, q.serial, LOOM_WORK_ACTIVE);
	item->resp = loom_work_resp_of(sched->domain, q.serial);
	item->id = loom_work_id_locked(sched->domain, q.serial);
	item->payload = q.payload;
	item->worker = worker;
	item->from_worker = victim == LOOM_SCHED_NO_WORKER ? worker : victim;
	return true;
}

/* Until something is queued: LOOM_WORK_OK, or why there will be nothing. */
static enum loom_error wait_for_items(struct loom_sched *sched,
					  uint32_t worker, unsigned int flags)
{
	for (;;) {
		if (sched->workers[worker].nactive)
			return LOOM_WORK_WORKER_BUSY;
		if (sched->queued)
			return LOOM_WORK_OK;
		if (domain_completed(sched))
			return LOOM_WORK_DOMAIN_COMPLETE;
		if (!(flags & LOOM_SCHED_WAIT))
			return LOOM_WORK_NO_WORK;
		/*
		 * Releases the lock while blocked; everything is checked again
		 * after waking, since another worker may have taken the item
		 * (and wakeups may be spurious).
		 */
		sched->waiters++;
		pthread_cond_wait(&sched->work_changed, &sched->domain->lock);
		sched->waiters--;
	}
}

enum loom_error loom_sched_acquire_batch(struct loom_sched *sched,
					      uint32_t worker,
					      struct loom_sched_item *items,
					      size_t max, unsigned int flags,
					      size_t *count)
{
	enum loom_error err;
	size_t n = 0;

	if (count)
		*count = 0;
	if (!sched || !items || !count || !max || worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (max > sched->max_batch)
		max = sched->max_batch;
	loom_work_lock(sched->domain);
	err = wait_for_items(sched, worker, flags);
	while (!err && n < max && take_one(sched, worker, &items[n]))
		n++;
	*count = n;
	loom_work_unlock(sched->domain);
	return err;
}

/* The active slot of @item, or why there is none: @if_retired, or not active. */
static enum loom_error active_slot(struct loom_sched *sched,
					const struct loom_sched_item *item,
					enum loom_error if_retired,
					struct active_item **slot)
{
	enum loom_error err;

	err = loom_work_check_live_locked(sched->domain, item->resp, if_retired);
	if (err)
		return err;
	*slot = find_active(&sched->workers[item->worker], item->resp.serial);
	return *slot ? LOOM_WORK_OK : LOOM_WORK_NOT_ACTIVE;
}

static enum loom_error publish_locked(struct loom_sched *sched,
					   const struct loom_sched_item *parent,
					   const uint64_t *payloads, size_t count,
					   struct loom_work_resp *children)
{
	struct sched_worker *w = &sched->workers[parent->worker];
	struct active_item *slot;
	enum loom_error err;
	uint64_t first;

	err = active_slot(sched, parent, LOOM_WORK_PARENT_RETIRED, &slot);
	if (err)
		return err;
	if (slot->cancel_requested)
		return LOOM_WORK_CANCEL_REQUESTED;
	if (count > sched->capacity - w->count)
		return LOOM_WORK_WOULD_BLOCK;
	err = log_reserve_items(sched, count);
	if (err)
		return err;
	/* Acquire every child's responsibility before any child is visible. */
	err = loom_work_spawn_locked(sched->domain, parent->resp, count, &first);
	if (err)
		return err;
	log_promise(sched, count);
	for (size_t i = 0; i < count; i++) {
		deque_push_back(sched, w, (struct queued_item){ first + i,
								payloads[i] });
		log_event(sched, LOOM_SCHED_EV_PUBLISH, parent->worker,
			  LOOM_SCHED_NO_WORKER, first + i, LOOM_WORK_ACTIVE);
		if (children)
			children[i] = loom_work_resp_of(sched->domain, first + i);
	}
	wake_for_items(sched, count);
	return LOOM_WORK_OK;
}

enum loom_error loom_sched_publish(struct loom_sched *sched,
					const struct loom_sched_item *parent,
					const uint64_t *payloads, size_t count,
					struct loom_work_resp *children)
{
	enum loom_error err;

	if (!sched || !parent || (count && !payloads) ||
	    parent->worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(sched->domain);
	err = publish_locked(sched, parent, payloads, count, children);
	loom_work_unlock(sched->domain);
	return err;
}

/* Retires @item's active @slot, recording @kind. */
static enum loom_work_status retire_active(struct loom_sched *sched,
					   const struct loom_sched_item *item,
					   struct active_item *slot,
					   enum loom_sched_event_kind kind)
{
	enum loom_work_status after;

	if (!slot->cancel_requested)
		log_release(sched, 1);	/* its cancel request */
	remove_active(&sched->workers[item->worker], slot);
	after = loom_work_retire_locked(sched->domain, item->resp.serial);
	log_event(sched, kind, item->worker, LOOM_SCHED_NO_WORKER,
		  item->resp.serial, after);
	after_retirement(sched, after);
	return after;
}

/*
 * Completes (@cancelling false) or cancels (true) the active @item: the one
 * needs no pending request, the other needs one.
 */
static enum loom_error finish_active(struct loom_sched *sched,
					  const struct loom_sched_item *item,
					  bool cancelling,
					  enum loom_work_status *status)
{
	struct active_item *slot;
	enum loom_work_status after;
	enum loom_error err;

	if (!sched || !item || item->worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(sched->domain);
	err = active_slot(sched, item, LOOM_WORK_RESP_USED, &slot);
	if (!err && slot->cancel_requested != cancelling)
		err = cancelling ? LOOM_WORK_NO_CANCEL_REQUEST :
				   LOOM_WORK_CANCEL_REQUESTED;
	if (!err) {
		after = retire_active(sched, item, slot, cancelling ?
				      LOOM_SCHED_EV_CANCEL_ACTIVE :
				      LOOM_SCHED_EV_COMPLETE);
		if (status)
			*status = after;
	}
	loom_work_unlock(sched->domain);
	return err;
}

enum loom_error loom_sched_complete(struct loom_sched *sched,
					 const struct loom_sched_item *item,
					 enum loom_work_status *status)
{
	return finish_active(sched, item, false, status);
}

enum loom_error loom_sched_cancel_active(struct loom_sched *sched,
					      const struct loom_sched_item *item,
					      enum loom_work_status *status)
{
	return finish_active(sched, item, true, status);
}

/* Requests cancellation of an active item; the worker finishes it. */
static enum loom_error request_cancel(struct loom_sched *sched,
					   uint32_t worker,
					   struct active_item *slot)
{
	if (slot->cancel_requested)
		return LOOM_WORK_CANCEL_PENDING;
	slot->cancel_requested = true;
	log_event(sched, LOOM_SCHED_EV_CANCEL_REQUEST, worker,
		  LOOM_SCHED_NO_WORKER, slot->serial, LOOM_WORK_ACTIVE);
	return LOOM_WORK_OK;
}

/* Removes and retires the @i-th queued item of @worker's deque. */
static enum loom_work_status cancel_queued(struct loom_sched *sched,
					   uint32_t worker, uint32_t i)
{
	struct sched_worker *w = &sched->workers[worker];
	uint64_t serial = deque_slot(sched, w, i)->serial;
	enum loom_work_status after;

	deque_remove(sched, w, i);
	log_release(sched, 2);	/* its acquisition and cancel request */
	after = loom_work_retire_locked(sched->domain, serial);
	log_event(sched, LOOM_SCHED_EV_CANCEL_QUEUED, worker,
		  LOOM_SCHED_NO_WORKER, serial, after);
	after_retirement(sched, after);
	return after;
}

static bool find_queued(struct loom_sched *sched, uint64_t serial,
			uint32_t *worker, uint32_t *index)
{
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (uint32_t i = 0; i < sw->count; i++) {
			if (deque_slot(sched, sw, i)->serial == serial) {
				*worker = w;
				*index = i;
				return true;
			}
		}
	}
	return false;
}

static enum loom_error cancel_locked(struct loom_sched *sched,
					  struct loom_work_resp item,
					  enum loom_sched_cancel_effect *effect,
					  enum loom_work_status *status)
{
	enum loom_error err;
	uint32_t w, i;

	err = loom_work_check_live_locked(sched->domain, item,
					  LOOM_WORK_RESP_USED);
	if (err)
		return err;
	for (w = 0; w < sched->nworkers; w++) {
		struct active_item *slot = find_active(&sched->workers[w],
						       item.serial);

		if (!slot)
			continue;
		err = request_cancel(sched, w, slot);
		if (!err) {
			*effect = LOOM_SCHED_CANCEL_REQUESTED;
			*status = LOOM_WORK_ACTIVE;
		}
		return err;
	}
	/* Every live responsibility is active or queued: it is queued. */
	if (!find_queued(sched, item.serial, &w, &i))
		return LOOM_WORK_RESP_INVALID;
	*status = cancel_queued(sched, w, i);
	*effect = LOOM_SCHED_CANCELLED_QUEUED;
	return LOOM_WORK_OK;
}

enum loom_error loom_sched_cancel(struct loom_sched *sched,
				       struct loom_work_resp item,
				       enum loom_sched_cancel_effect *effect,
				       enum loom_work_status *status)
{
	enum loom_sched_cancel_effect did;
	enum loom_work_status after;
	enum loom_error err;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(sched->domain);
	err = cancel_locked(sched, item, &did, &after);
	loom_work_unlock(sched->domain);
	if (!err && effect)
		*effect = did;
	if (!err && status)
		*status = after;
	return err;
}

enum loom_error loom_sched_cancel_all(struct loom_sched *sched,
					   uint64_t *cancelled,
					   enum loom_work_status *status)
{
	uint64_t n = 0;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(sched->domain);
	/* Requests first, so no active item can publish afterwards. */
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (uint32_t i = sw->first; i < sw->end; i++)
			if (!sw->active[i].retired &&
			    !sw->active[i].cancel_requested)
				request_cancel(sched, w, &sw->active[i]);
	}
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		for (; sched->workers[w].count; n++)
			cancel_queued(sched, w, 0);
	}
	if (cancelled)
		*cancelled = n;
	if (status)
		*status = !sched->domain->root_admitted ? LOOM_WORK_AWAITING_ROOT :
			  domain_completed(sched) ? LOOM_WORK_COMPLETED :
			  LOOM_WORK_ACTIVE;
	loom_work_unlock(sched->domain);
	return LOOM_WORK_OK;
}

/* -------------------------------------------------------- replay trace --- */

enum loom_error loom_sched_take_trace(struct loom_sched *sched,
					   struct loom_sched_trace **out)
{
	struct event_log fresh = { 0 };
	struct loom_sched_trace *trace;
	enum loom_error err;

	if (!sched || !out)
		return LOOM_WORK_INVALID_ARGUMENT;
	trace = malloc(sizeof(*trace));
	if (!trace)
		return LOOM_WORK_OUT_OF_MEMORY;
	loom_work_lock(sched->domain);
	/* The live items' promises move to the new log with room for them. */
	fresh.promised = sched->log.promised;
	err = log_grow(&fresh, fresh.promised);
	if (!err) {
		trace->events = sched->log.events;
		trace->count = sched->log.count;
		sched->log = fresh;
	}
	loom_work_unlock(sched->domain);
	if (err) {
		free(trace);
		return err;
	}
	trace->domain = sched->domain;
	loom_work_domain_get(sched->domain);
	*out = trace;
	return LOOM_WORK_OK;
}

size_t loom_sched_trace_count(const struct loom_sched_trace *trace)
{
	return trace ? trace->count : 0;
}

const struct loom_sched_event *
loom_sched_trace_events(const struct loom_sched_trace *trace)
{
	return trace ? trace->events : NULL;
}

void loom_sched_trace_free(struct loom_sched_trace *trace)
{
	if (!trace)
		return;
	free(trace->events);
	loom_work_domain_put(trace->domain);
	free(trace);
}
