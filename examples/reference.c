// SPDX-License-Identifier: MIT
/*
 * reference: what each example prints, computed in plain C from the same
 * definitions as the example's comment gives (not from the .loom file).
 * make test runs it on the host and requires the output to equal the
 * example's .expected file; the VM run of the compiled example must then
 * print that file too.
 *
 * Usage: reference NAME   (vector_add, stencil2d, stencil2d_views, tokens, tree_bfs, uts,
 *                          saxpy, dot)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vector_add(void)
{
	enum { N = 1024 };
	int64_t sum = 0, c = 0;

	for (int64_t i = 0; i < N; i++) {
		c = i + i * i;
		sum += c;
	}
	printf("%" PRId64 "\n%" PRId64 "\n", c, sum);
}

static void stencil2d(void)
{
	enum { W = 34, H = 20 };
	static int64_t in[W * H], out[W * H];
	int64_t cells = 0, sum = 0;

	for (int64_t i = 0; i < W * H; i++)
		in[i] = i * i * i;
	for (int r = 2; r < H - 1; r += 3) {
		for (int col = 1; col < W - 1; col += 2) {
			int at = r * W + col;

			out[at] = in[at - W] + in[at + W] + in[at - 1] +
				  in[at + 1] - 4 * in[at];
			cells++;
		}
	}
	for (int i = 0; i < W * H; i++)
		sum += out[i];
	printf("%" PRId64 "\n%" PRId64 "\n%" PRId64 "\n", cells, sum,
	       out[5 * W + 7]);
}

static void tokens(void)
{
	int64_t cell = 21, other = 0;

	/* the empty @bump runs no instance */
	cell *= 2;
	printf("%" PRId64 "\n%" PRId64 "\n%" PRId64 "\n", cell, other,
	       cell + 1);
}

/* ------------------------------------------------------------ trees --- */

struct stats {
	int64_t nodes, deepest, depth_sum;
};

static void visit(struct stats *s, int64_t depth)
{
	s->nodes++;
	s->depth_sum += depth;
	if (depth > s->deepest)
		s->deepest = depth;
}

static void print_stats(const struct stats *s)
{
	printf("%" PRId64 "\n%" PRId64 "\n%" PRId64 "\n", s->nodes,
	       s->deepest, s->depth_sum);
}

/* Depth by the parent chain: parents precede their children. */
static void tree_bfs(void)
{
	enum { N = 2000 };
	static int64_t depth[N];
	struct stats s = { 0 };

	visit(&s, 0);
	for (uint64_t v = 1; v < N; v++) {
		uint64_t parent = ((v * 2654435761u) >> 7) % v;

		depth[v] = depth[parent] + 1;
		visit(&s, depth[v]);
	}
	print_stats(&s);
}

static void uts_node(struct stats *s, uint64_t hash, int64_t depth)
{
	unsigned fan = depth >= 9 ? 0 : (hash >> 7) % 5;

	visit(s, depth);
	for (unsigned k = 0; k < fan; k++)
		uts_node(s, ((hash + k + 1) * 6364136223846793005ULL +
			     1442695040888963407ULL) >> 32, depth + 1);
}

static void uts(void)
{
	struct stats s = { 0 };

	uts_node(&s, 2654435769u, 0);
	print_stats(&s);
}

/*
 * f32 values print with 9 significant digits, as loom-run prints them:
 * enough to tell any two floats apart.  Every operation below is one
 * float operation rounded to nearest even (this file is built with
 * -ffp-contract=off, so a * x + y is never fused).
 */
static void print_f32(float f)
{
	printf("%.9g\n", (double)f);
}

static void saxpy(void)
{
	enum { N = 1000 };
	const float a = 2.5f;
	float y = 0, sum = 0;

	for (int i = 0; i < N; i++) {
		float x = (float)i / 8.0f;

		y = 1.0f - (float)i / 3.0f;
		y = a * x + y;
		sum += y;
	}
	print_f32(y);
	print_f32(sum);
}

static void dot(void)
{
	enum { PARTS = 8, CHUNK = 128 };
	float total = 0, top = -INFINITY, first = 0;

	for (int p = 0; p < PARTS; p++) {
		float sum = 0;

		for (int i = p * CHUNK; i < (p + 1) * CHUNK; i++) {
			float x = (float)(i % 17) - 8.0f;
			float y = 1.0f / (float)(i + 1);
			float xy = x * y;

			sum += xy;
			/* no NaN here: maximumf is the usual larger */
			top = xy > top ? xy : top;
		}
		if (p == 0)
			first = sum;
		total += sum;
	}
	print_f32(first);
	print_f32(total);
	print_f32(top);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} examples[] = {
		{ "vector_add", vector_add }, { "stencil2d", stencil2d },
		/* the same stencil written with views and affine maps */
		{ "stencil2d_views", stencil2d },
		{ "tokens", tokens }, { "tree_bfs", tree_bfs }, { "uts", uts },
		{ "saxpy", saxpy }, { "dot", dot },
	};

	for (size_t i = 0; argc == 2 && i < sizeof(examples) / sizeof(examples[0]); i++) {
		if (!strcmp(argv[1], examples[i].name)) {
			examples[i].fn();
			return 0;
		}
	}
	fprintf(stderr, "usage: reference vector_add|stencil2d|stencil2d_views|tokens|tree_bfs|uts|saxpy|dot\n");
	return 2;
}
