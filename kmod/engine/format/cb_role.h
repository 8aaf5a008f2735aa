/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_role.h - the one table of tensor roles (uapi's COLIBRI_T_*): each
 * role's name, where its tensor lives in the engine's weight tables (the
 * model's own, a layer's, or one routed expert's) and its shape as
 * dimensions of the config.  The validator and binder (cb_format.c), the
 * kind checks, the converter's sources and the tests ask it; nobody else
 * maps a role to a field or a shape.  Integer-only.
 */
#ifndef CB_ROLE_H
#define CB_ROLE_H

#include "core/cb_engine.h"
#include "format/cb_format.h"

/* Which struct holds a role's tensor. */
enum cb_role_scope {
	CB_ROLE_NONE = 0,	/* not a role */
	CB_ROLE_MODEL = 1,	/* struct cb_model_weights */
	CB_ROLE_LAYER = 2,	/* struct cb_layer_weights */
	CB_ROLE_EXPERT = 3,	/* struct cb_expert_weights, one per routed expert */
};

/* The scope of @role (CB_ROLE_NONE for a number that is no role). */
cb_u32 cb_role_scope(cb_u32 role);

/*
 * The shape of @role's tensor in a model of config @c: @rows x @cols, and
 * whether it is an f32 vector (norms, biases, sinks: one row, or one per
 * expert).  1, or 0 for a number that is no role.
 */
int cb_role_shape(const struct cb_model_config *c, cb_u32 role, cb_u32 *rows, cb_u32 *cols,
		  cb_u32 *vector);

/*
 * The tensor @s names in a weight table: @w for the model's own roles,
 * @layers[@s->layer] (of @n_layers) for a layer's, its experts (of
 * @n_experts) for an expert's.  NULL if @s is out of range, its layer has
 * no experts, or its role is none.
 */
struct cb_tensor *cb_role_tensor(struct cb_model_weights *w, struct cb_layer_weights *layers,
				 cb_u32 n_layers, cb_u32 n_experts,
				 const struct cb_format_slot *s);

/* A layer's own tensor of @role (not an expert's), or NULL. */
struct cb_tensor *cb_role_layer_tensor(struct cb_layer_weights *L, cb_u32 role);

#endif /* CB_ROLE_H */
