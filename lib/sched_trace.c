// SPDX-License-Identifier: MIT
/*
 * DOC: the scheduler's replay trace
 *
 * Taking the trace a scheduler recorded (recording is sched_internal.h's
 * trace_number() and record_event(), on the transitions' own path): each
 * event was stored in its item's record with a number from one counter,
 * so taking the trace places every event by its number, in one pass over
 * the records, and closes the holes a thief's lost race left.  The
 * numbers respect causality (sched.c's opening comment), so the order is
 * a replayable one.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "sched_internal.h"

struct loom_sched_trace {
	struct loom_sched_event *events;
	size_t count;
	size_t mapped;			/* bytes mapped for events, or 0: malloc */
	struct loom_work_domain *domain;	/* a reference: keeps the ids valid */
};

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

static struct loom_sched_event slot_event(const struct loom_sched *sched,
					  const struct loom_work_record *rec,
					  const struct loom_trace_slot_rec *s,
					  uint64_t v)
{
	return (struct loom_sched_event){
		.kind = (enum loom_sched_event_kind)(v & LOOM_SLOT_KIND_MASK),
		.worker = s->worker,
		.other_worker = s->other_worker,
		.completes_domain = v & LOOM_SLOT_COMPLETES,
		.item = loom_work_id_of(sched->domain, rec),
	};
}

/* The events of one record into place (see place_events()). */
static size_t place_record_events(struct loom_sched *sched,
				  const struct loom_work_chunk *chunk,
				  struct loom_work_record *rec,
				  struct loom_sched_event *events,
				  uint64_t numbers)
{
	struct loom_trace_slot_rec *slots = loom_work_slots(rec);
	size_t placed = 0;

	if (!loom_work_issued(chunk, atomic_load_explicit(&rec->state,
							  memory_order_acquire)))
		return 0;	/* being issued: no event yet */
	for (int i = 0; i < LOOM_TRACE_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&slots[i].seq_kind,
						  memory_order_acquire);
		uint64_t seq = v >> LOOM_SLOT_SEQ_SHIFT;

		if (!v || (v & LOOM_SLOT_TAKEN) || seq > numbers)
			continue;
		events[seq - 1] = slot_event(sched, rec, &slots[i], v);
		atomic_store_explicit(&slots[i].seq_kind,
				      v | LOOM_SLOT_TAKEN,
				      memory_order_relaxed);
		placed++;
	}
	return placed;
}

/*
 * Domain mutex held.  Every recorded event numbered 1 .. @numbers and not
 * taken before goes to events[number - 1] (zeroed: kind 0 is a hole) and
 * is marked taken; returns how many did.  Numbers are dense but for a
 * thief's lost race (and a completing retirement's renumbering after one),
 * so placing by number orders the trace in one pass.  An event still being
 * written, or numbered later, is left for the next trace.
 */
static size_t place_events(struct loom_sched *sched,
			   struct loom_sched_event *events, uint64_t numbers)
{
	uint64_t reserved = atomic_load_explicit(&sched->domain->reserved,
						 memory_order_acquire);
	size_t placed = 0;

	for (uint64_t k = 0; k << LOOM_WORK_CHUNK_SHIFT < reserved; k++) {
		struct loom_work_chunk *chunk = loom_work_chunk_at(sched->domain, k);
		uint64_t left = reserved - (k << LOOM_WORK_CHUNK_SHIFT);

		for (uint64_t at = 0; at < LOOM_WORK_CHUNK_RECORDS && at < left; at++)
			placed += place_record_events(sched, chunk,
						      &chunk->records[at],
						      events, numbers);
	}
	return placed;
}

/*
 * Zeroed room for @n events.  A big trace (40 bytes an event, three or
 * four events an item) gets huge pages: one fault per 2 MiB instead of one
 * per 4 KiB, which is most of the cost of taking it.
 */
static struct loom_sched_event *events_alloc(uint64_t n, size_t *mapped)
{
	size_t bytes = n * sizeof(struct loom_sched_event);

	*mapped = 0;
	if (n > SIZE_MAX / sizeof(struct loom_sched_event))
		return NULL;
	if (bytes < LOOM_HUGE_PAGE)
		return calloc(n, sizeof(struct loom_sched_event));
	bytes = (bytes + LOOM_HUGE_PAGE - 1) & ~(LOOM_HUGE_PAGE - 1);
	*mapped = bytes;
	return loom_huge_alloc(bytes);
}

static void events_free(struct loom_sched_event *events, size_t mapped)
{
	if (mapped)
		munmap(events, mapped);
	else
		free(events);
}

/*
 * Closes the holes among @numbers events, @placed of them not holes;
 * returns how many remain.  Only what follows the first hole moves, and
 * a trace without holes (one worker's, see last_number()) is not read.
 */
static size_t compact_events(struct loom_sched_event *events, uint64_t numbers,
			     size_t placed)
{
	uint64_t j = 0;
	size_t n;

	if (placed == numbers)
		return placed;
	while (j < numbers && events[j].kind)
		j++;
	for (n = j; j < numbers; j++)
		if (events[j].kind)
			events[n++] = events[j];
	return n;
}

enum loom_error loom_sched_take_trace(struct loom_sched *sched,
				      struct loom_sched_trace **out)
{
	struct loom_sched_trace *trace;
	uint64_t numbers = 0;
	size_t n = 0;

	if (!sched || !out)
		return LOOM_WORK_INVALID_ARGUMENT;
	trace = calloc(1, sizeof(*trace));
	if (!trace)
		return LOOM_WORK_OUT_OF_MEMORY;
	loom_work_lock(sched->domain);
	if (sched->tracing)
		numbers = atomic_load_explicit(&sched->domain->trace_seq,
					       memory_order_acquire);
	if (numbers) {
		/* Allocated before any event is marked taken. */
		trace->events = events_alloc(numbers, &trace->mapped);
		if (!trace->events) {
			loom_work_unlock(sched->domain);
			free(trace);
			return LOOM_WORK_OUT_OF_MEMORY;
		}
		n = compact_events(trace->events, numbers,
				   place_events(sched, trace->events, numbers));
	}
	loom_work_unlock(sched->domain);
	trace->count = n;
	trace->domain = sched->domain;
	loom_work_domain_get(sched->domain);
	*out = trace;
	return LOOM_OK;
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

uint64_t loom_sched_trace_occurrence(const struct loom_sched_trace *trace)
{
	return trace ? trace->domain->occurrence : 0;
}

void loom_sched_trace_free(struct loom_sched_trace *trace)
{
	if (!trace)
		return;
	events_free(trace->events, trace->mapped);
	loom_work_domain_put(trace->domain);
	free(trace);
}
