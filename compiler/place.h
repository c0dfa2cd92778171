/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * place.h: place and route a dataflow graph on a W x H fabric and write
 * the struct loom_fabric_config image (Documentation/compiler.rst, "Place
 * and route").
 */
#ifndef LOOMC_PLACE_H
#define LOOMC_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "graph.h"

#define PLACE_MAX_TILES		(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM)
/* greedy placements before routed annealing searches (place.c) */
#define PLACE_ATTEMPTS		8
/* the same per group size and grouping rule */
#define PLACE_TEMPORAL_ATTEMPTS	6
/*
 * The device model's default timing (the engine's LOOM_DEFAULT_LOAD_LATENCY,
 * LOOM_DEFAULT_MEM_PORTS and LOOM_DEFAULT_FIFO_DEPTH), for the schedule's
 * estimates, path balancing and the engine that measures the II
 * (measure.c); place_test checks that they agree with the engine's.
 */
#define PLACE_LOAD_LATENCY	4
#define PLACE_MEM_PORTS		2
#define PLACE_FIFO_DEPTH	4

/**
 * struct place_stats - mapping quality
 * @pes: PEs used
 * @ports: edge ports bound
 * @hops: links used (switch hops over all routes)
 * @longest_cycles: the longest path from a port to a PE result, in cycles
 *	(one per hop, one per PE, the load latency per LOAD)
 * @longest_hops: the most link hops on any port-to-PE path
 * @cycles_per_instance: the initiation interval this mapping achieves at
 *	best, its throughput bound: no PE can start instances faster (LOAD
 *	holds one load in flight for the load latency; at most
 *	PLACE_MEM_PORTS memory operations per cycle; a temporal PE fires one
 *	of its operations per cycle); per loop iteration when @loops
 * @ii_bound: the interval no mapping on this fabric beats: the memory
 *	bound, or the operations that fire per instance (per loop iteration
 *	when @loops) over the tiles when they must share PEs
 * @slots: slots per PE of the configuration (1: spatial)
 * @movs: MOVs added (counted in @pes) so that the early inputs of an
 *	operation can hold the tokens that wait for its late ones
 * @loops: the graph has scf.for loops
 * @attempts: greedy placements tried until one routed, or routed annealing's
 *	starts when it routed (of the last group size)
 * @measured: cycles per instance (item), or per iteration of the innermost
 *	loop when @measured_per_iteration, that the device's fabric engine
 *	takes for a synthetic launch of the configuration (measure.c); 0 when
 *	not measured
 * @measured_status: that run's enum loom_hw_status, -1 when not run
 * @measured_per_iteration: @measured is per loop iteration
 */
struct place_stats {
	int pes, ports, hops;
	int longest_cycles, longest_hops;
	int cycles_per_instance;
	int ii_bound;
	int slots;
	int movs;
	int loops;
	int attempts;
	double measured;
	int measured_status;
	bool measured_per_iteration;
};

/**
 * struct place_src - the source construct behind a slot or port, for the
 *	image's source map
 * @loc: where it is (line 0: nothing there)
 * @name: the SSA value it computes, without '%', or NULL; the IR's, so
 *	valid while the unit's module lives
 */
struct place_src {
	struct loom_loc loc;
	const char *name;
};

/**
 * struct place_miss - how far a routing that failed was from one
 * @seen: whether routed annealing ran to the end (else the rest is 0)
 * @shared: links left carrying two values or more
 * @hops: link hops its routes took, a shared link counted once per value
 * @chans: the values a link could carry in that search (its channels)
 */
struct place_miss {
	bool seen;
	int shared, hops, chans;
};

/**
 * struct placement - a routed configuration
 * @width: fabric width
 * @height: fabric height
 * @slots: slots per PE: 1 (spatial, LOOM_CONFIG_VERSION) or 2 to
 *	LOOM_PE_SLOTS, as many as some tile uses
 * @tiles: tile configurations, slot k of tile t at t * @slots + k
 * @ports: edge port bindings
 * @num_ports: how many
 * @slot_src: the operation of slot k of tile t at t * LOOM_PE_SLOTS + k
 *	(whatever @slots is), a MOV's the value it buffers
 * @port_src: the argument, coordinate or ctrl each port binding feeds
 * @channels: links between tiles carry several values, value k of a link
 *	set in slot k of its tile (LOOM_CONFIG_VERSION_CHANNELS); else each
 *	link carries one, set in one slot
 * @stats: its quality
 * @miss: when no placement routed, the closest routed annealing came
 */
struct placement {
	unsigned width, height, slots;
	bool channels;
	struct loom_tile_config tiles[PLACE_MAX_TILES * LOOM_PE_SLOTS];
	struct loom_port_binding ports[LOOM_MAX_PORTS];
	unsigned num_ports;
	struct place_src slot_src[PLACE_MAX_TILES * LOOM_PE_SLOTS];
	struct place_src port_src[LOOM_MAX_PORTS];
	struct place_stats stats;
	struct place_miss miss;
};

/*
 * Places and routes @g on a @width x @height fabric into @p.  Returns the
 * number of errors reported at @loc ("does not fit", "cannot route").
 */
unsigned place_graph(struct diag *d, struct loom_loc loc,
		     const struct graph *g, unsigned width, unsigned height,
		     struct placement *p);

/*
 * Threads place_graph() may use to search group sizes side by side: 0 (the
 * default) one per CPU, at most 4; 1 searches on the caller's thread.  The
 * result does not depend on it.
 */
void place_set_threads(unsigned n);

/*
 * Whether a graph that routes with no link carrying two values may be
 * routed with links of several channels (LOOM_CONFIG_VERSION_CHANNELS,
 * which a device runs with LOOM_CAP_LINK_CHANNELS, ABI 0.8): true by
 * default; false for older devices.
 */
void place_set_link_channels(bool on);

/* Size of the configuration image of @p. */
size_t place_config_size(const struct placement *p);

/* Writes it into @buf (place_config_size() bytes). */
void place_config_write(const struct placement *p, void *buf);

/*
 * A readable listing of a configuration image of @size bytes: per used
 * tile its op, type, immediate and routes, then the ports.  Returns -1 and
 * prints nothing when the image is malformed.
 */
int print_config(FILE *out, const void *cfg, size_t size);

void place_print_stats(FILE *out, const struct place_stats *s);

#endif /* LOOMC_PLACE_H */
