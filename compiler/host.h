/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host.h: a func.func body to the host program of .loom.host
 * (uapi/loom_image.h, Documentation/compiler.rst "The host program").
 */
#ifndef LOOMC_HOST_H
#define LOOMC_HOST_H

#include "emit.h"

/*
 * Compiles host function @f into @img->host; launches name threads already
 * in @img.  Returns the number of errors reported through @d.
 */
unsigned host_compile(struct diag *d, struct ir_func *f,
		      struct image_builder *img);

#endif /* LOOMC_HOST_H */
