/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_ref.h: the reference fabric engine (fabric_ref_impl.h), the same API
 * as engine.h's loom_fabric_* under the names ref_fabric_*.
 */
#ifndef LOOM_FABRIC_REF_H
#define LOOM_FABRIC_REF_H

#include "engine.h"

struct ref_fabric;

struct ref_fabric *ref_fabric_create(const struct loom_fabric_params *p);
void ref_fabric_destroy(struct ref_fabric *f);
enum loom_config_error ref_fabric_configure(struct ref_fabric *f,
					    const void *image, size_t size);
bool ref_fabric_configured(const struct ref_fabric *f);
void ref_fabric_reset(struct ref_fabric *f);
int ref_fabric_run(struct ref_fabric *f, const struct loom_dispatch *d,
		   const struct loom_fabric_env *env,
		   struct loom_hw_counters *counters);
void ref_fabric_dump(const struct ref_fabric *f, struct loom_hw_dump *dump,
		     struct loom_hw_dump_tile *tiles);
uint64_t ref_fabric_slot_firings(const struct ref_fabric *f, unsigned tile,
				 unsigned slot);

#endif /* LOOM_FABRIC_REF_H */
