// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * graph.c: the dataflow graph: storage, names and the DOT printer.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

void graph_init(struct graph *g)
{
	memset(g, 0, sizeof(*g));
}

void graph_free(struct graph *g)
{
	free(g->nodes);
	memset(g, 0, sizeof(*g));
}

int graph_add(struct graph *g, const struct g_node *n)
{
	if (g->num == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 32;
		g->nodes = realloc(g->nodes, g->cap * sizeof(*g->nodes));
		if (!g->nodes)
			abort();
	}
	g->nodes[g->num] = *n;
	return g->num++;
}

unsigned graph_inputs(const struct g_node *n)
{
	unsigned mask = 0;

	for (int k = 0; k < 3; k++)
		if (n->kind == G_PE && n->in[k] != G_NONE)
			mask |= 1U << k;
	return mask;
}

int graph_count(const struct graph *g, enum g_kind kind)
{
	int c = 0;

	for (int i = 0; i < g->num; i++)
		c += g->nodes[i].kind == kind;
	return c;
}

const char *loom_port_kind_name(unsigned kind)
{
	static const char *const names[] = {
		"?", "operand", "coord", "ctrl", "payload", "completion",
	};

	return kind <= LOOM_PORT_COMPLETION ? names[kind] : "?";
}

static void dot_node(FILE *out, const struct graph *g, int i)
{
	const struct g_node *n = &g->nodes[i];

	if (n->kind == G_PORT) {
		fprintf(out, "  n%d [shape=invhouse,label=\"%s %u\"];\n", i,
			loom_port_kind_name(n->port_kind), n->port_index);
		return;
	}
	fprintf(out, "  n%d [shape=box,label=\"%s.%s", i, loom_op_name(n->op),
		n->type == LOOM_TYPE_I32 ? "i32" : "i64");
	if (n->imm_operand)
		fprintf(out, " operand=%" PRIu64, n->imm);
	else if (n->imm_b || n->op == LOOM_OP_CONST)
		fprintf(out, " imm=%" PRId64, (int64_t)n->imm);
	if (n->op == LOOM_OP_REDUCE)
		fprintf(out, " %s", loom_op_name((unsigned)n->imm));
	if (n->op == LOOM_OP_ATOMIC && loom_atomic_info(n->imm)->name)
		fprintf(out, " %s", loom_atomic_info(n->imm)->name);
	if (n->name)
		fprintf(out, "\\n%%%s", n->name);
	fprintf(out, "\"];\n");
}

void graph_print_dot(FILE *out, const struct graph *g)
{
	static const char slot[] = "ABC";

	fprintf(out, "digraph \"%s\" {\n", g->thread ? g->thread : "thread");
	for (int i = 0; i < g->num; i++)
		dot_node(out, g, i);
	for (int i = 0; i < g->num; i++)
		for (int k = 0; k < 3; k++)
			if (graph_inputs(&g->nodes[i]) & (1U << k))
				fprintf(out, "  n%d -> n%d [label=\"%c\"];\n",
					g->nodes[i].in[k], i, slot[k]);
	fprintf(out, "}\n");
}
