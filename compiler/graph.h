/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * graph.h: the dataflow graph lowering builds and place and route maps.
 *
 * A node is either a PE operation (enum loom_op with its type, immediate
 * and up to three inputs A, B, C) or an input port of the fabric (struct
 * loom_port_binding kind and index).  An edge is an input slot naming the
 * node whose output feeds it; an output may feed many slots (a fork).
 * Nodes are appended after their inputs, so index order is topological.
 */
#ifndef LOOMC_GRAPH_H
#define LOOMC_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "loom_device.h"
#include "loom_ops.h"	/* loom_op_name(): "ADD", "LOAD", ... */

#define G_NONE	(-1)

enum g_kind {
	G_PE,
	G_PORT,
};

/**
 * struct g_node - one operation or input port
 * @kind: G_PE or G_PORT
 * @op: G_PE: enum loom_op
 * @type: G_PE: LOOM_TYPE_I64 or LOOM_TYPE_I32
 * @imm_b: G_PE: B is @imm (LOOM_TILE_IMM_B)
 * @imm_operand: G_PE CONST: yields launch operand @imm
 *	(LOOM_TILE_IMM_OPERAND; the placer makes these)
 * @imm: immediate (CONST value, IMM_B operand, REDUCE operation)
 * @in: G_PE: the node feeding A, B, C, or G_NONE
 * @port_kind: G_PORT: enum loom_port_kind
 * @port_index: G_PORT: operand or coordinate index
 * @loc: the source construct it comes from
 * @name: the SSA value it computes (without '%'), or NULL
 */
struct g_node {
	enum g_kind kind;
	uint8_t op;
	uint8_t type;
	bool imm_b;
	bool imm_operand;
	uint64_t imm;
	int in[3];
	uint8_t port_kind;
	uint8_t port_index;
	struct loom_loc loc;
	const char *name;
};

/**
 * struct graph - the lowered body of one thread
 * @nodes: every node, topologically ordered
 * @num: how many
 * @cap: allocated
 * @thread: the thread's name
 * @domain: enum loom_domain_kind
 * @rank: coordinate rank (dense)
 * @child_capacity: dynamic work: the bound on children per item
 * @loops: scf.for loops lowered (throughput is then per iteration)
 */
struct graph {
	struct g_node *nodes;
	int num;
	int cap;
	const char *thread;
	int domain;
	int rank;
	unsigned child_capacity;
	int loops;
};

void graph_init(struct graph *g);
void graph_free(struct graph *g);

/* Appends @n; returns its index (aborts when out of memory). */
int graph_add(struct graph *g, const struct g_node *n);

/* Inputs @n uses: a mask of bit k for in[k] != G_NONE. */
unsigned graph_inputs(const struct g_node *n);

int graph_count(const struct graph *g, enum g_kind kind);

/* "operand", "coord", "ctrl", "payload", "completion" */
const char *loom_port_kind_name(unsigned kind);

/* The graph in Graphviz DOT. */
void graph_print_dot(FILE *out, const struct graph *g);

#endif /* LOOMC_GRAPH_H */
