// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compile.c: drives lowering, place and route and emission over every
 * thread of every verified unit.
 */
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "host.h"
#include "lower.h"
#include "verifier.h"

struct ctx {
	struct diag *d;
	const struct compile_options *o;
	struct image_builder *img;
};

static bool has_thread(const struct image_builder *img, const char *name)
{
	for (int i = 0; i < img->num; i++)
		if (!strcmp(img->threads[i].name, name))
			return true;
	return false;
}

static void compile_thread(struct ctx *c, struct ir_func *f)
{
	struct placement *p;
	struct graph g;

	/* loaders look threads up by name: one image, one thread per name */
	if (has_thread(c->img, f->name)) {
		diag_error(c->d, f->name_loc,
			   "thread @%s is already defined in an earlier unit; an image holds one thread per name",
			   f->name);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p)
		abort();
	graph_init(&g);
	if (lower_thread(c->d, f, &g) == 0) {
		if (c->o->dot)
			graph_print_dot(c->o->dot, &g);
		if (place_graph(c->d, f->name_loc, &g, c->o->width,
				c->o->height, p) == 0) {
			image_add_thread(c->img, f, &g, p);
			if (c->o->listing) {
				void *cfg = malloc(place_config_size(p));

				if (!cfg)
					abort();
				place_config_write(p, cfg);
				fprintf(c->o->listing, "thread @%s\n", f->name);
				print_config(c->o->listing, cfg,
					     place_config_size(p));
				place_print_stats(c->o->listing, &p->stats);
				free(cfg);
			}
			if (c->o->stats) {
				fprintf(c->o->stats, "@%s:", f->name);
				place_print_stats(c->o->stats, &p->stats);
			}
		}
	}
	graph_free(&g);
	free(p);
}

/* Threads first: host functions launch them by their image index. */
static void each_unit(struct ir_module *m, void *arg)
{
	struct ctx *c = arg;

	for (struct ir_func *f = m->funcs; f; f = f->next)
		if (f->is_thread)
			compile_thread(c, f);
	/* a called function with parameters exists only inlined: its
	 * parameters' sizes and layouts are its call sites' */
	for (struct ir_func *f = m->funcs; f; f = f->next)
		if (!f->is_thread && !(f->called && f->num_inputs))
			host_compile(c->d, f, c->img);
}

unsigned compile_source(struct diag *d, const struct compile_options *o,
			struct image_builder *img)
{
	struct ctx c = { d, o, img };

	if (d->src && loom_builder_set_source_file(img->writer, d->src->name))
		abort();
	verify_source(d, each_unit, &c);
	return d->errors;
}
