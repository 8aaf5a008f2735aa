// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_format.c - the .colibri validator and binder, shared by the kernel and
 * userspace.
 *
 * The file is untrusted: every field is read through a little-endian
 * accessor from a buffer whose length is known, every sum and product of
 * file values is overflow-checked, and nothing in the data region is
 * touched except by cb_format_tensor_crc_ok().  The directory must list the
 * tensors in canonical order with increasing offsets, which turns "each
 * required tensor exactly once" and "no two tensors overlap" into checks
 * against the previous entry: one pass, no memory, no sorting.
 *
 * Integer only (no floating point: the kernel calls this outside FPU
 * sections), small stack frames.
 */
#include "format/cb_format.h"
#include "format/cb_format_same.h"
#include "arch/cb_gpt_oss.h"
#include "arch/cb_mla.h"
#include "arch/cb_delta.h"
#include "format/cb_role.h"
#include "core/cb_why.h"

/* ---- little-endian field access ------------------------------------- */

static cb_u32 rd32(const void *base, cb_u32 off)
{
	const cb_u8 *p = (const cb_u8 *)base + off;

	return (cb_u32)p[0] | (cb_u32)p[1] << 8 | (cb_u32)p[2] << 16 |
	       (cb_u32)p[3] << 24;
}

static cb_u64 rd64(const void *base, cb_u32 off)
{
	return (cb_u64)rd32(base, off) | (cb_u64)rd32(base, off + 4) << 32;
}

#define HOFF(f) ((cb_u32)__builtin_offsetof(struct colibri_file_header, f))
#define ROFF(f) (HOFF(rope_scaling) + \
		 (cb_u32)__builtin_offsetof(struct colibri_file_rope_scaling, f))
#define COFF(f) (HOFF(config) + \
		 (cb_u32)__builtin_offsetof(struct colibri_file_config, f))
#define TOFF(f) ((cb_u32)__builtin_offsetof(struct colibri_file_tensor, f))

/* ---- roles, shapes, canonical order ---------------------------------- */

/* Attention-part roles of layer l, in canonical order; returns the count. */
static cb_u32 attn_roles(const struct cb_model_config *c, cb_u32 l, cb_u32 *roles)
{
	cb_u32 n = 0;

	if (cb_is_mla(c))
		return cb_mla_attn_roles(c, roles);
	if (cb_layer_is_delta(c, l))
		return cb_delta_attn_roles(c, roles);
	roles[n++] = COLIBRI_T_ATTN_NORM;
	roles[n++] = COLIBRI_T_WQ;
	roles[n++] = COLIBRI_T_WK;
	roles[n++] = COLIBRI_T_WV;
	roles[n++] = COLIBRI_T_WO;
	if (c->qkv_bias) {
		roles[n++] = COLIBRI_T_BQ;
		roles[n++] = COLIBRI_T_BK;
		roles[n++] = COLIBRI_T_BV;
	}
	if (c->qk_norm) {
		roles[n++] = COLIBRI_T_Q_NORM;
		roles[n++] = COLIBRI_T_K_NORM;
	}
	roles[n++] = COLIBRI_T_FFN_NORM;
	return n;
}

/* An MoE layer's roles after its experts (shared expert, router bias). */
static cb_u32 shared_roles(const struct cb_model_config *c, cb_u32 *roles)
{
	cb_u32 n = 0;

	if (c->shared_ffn) {
		roles[n++] = COLIBRI_T_SHARED_GATE;
		roles[n++] = COLIBRI_T_SHARED_UP;
		roles[n++] = COLIBRI_T_SHARED_DOWN;
		if (c->shared_gate)
			roles[n++] = COLIBRI_T_SHARED_EXPERT_GATE;
	}
	if (c->mla.sel_bias)
		roles[n++] = COLIBRI_T_ROUTER_SEL_BIAS;
	return n;
}

static cb_u32 n_global(const struct cb_model_config *c)
{
	return c->tied_embeddings ? 2 : 3;
}

/* Tensors of layer l (the config has passed cb_config_check()). */
static cb_u32 layer_count(const struct cb_model_config *c, cb_u32 l)
{
	cb_u32 roles[16];
	cb_u32 n = attn_roles(c, l, roles) + cb_gpt_oss_roles(c, roles);

	if (cb_layer_is_moe(c, l))
		return n + 1 + 3 * c->n_experts + shared_roles(c, roles);
	return n + 3;
}

/* The p-th tensor of layer l (p < layer_count()). */
static void slot_in_layer(const struct cb_model_config *c, cb_u32 l, cb_u32 p,
			  struct cb_format_slot *s)
{
	cb_u32 roles[16 + CB_GPT_OSS_ROLES];
	cb_u32 n = attn_roles(c, l, roles);
	cb_u32 no = cb_gpt_oss_roles(c, roles + n), lc = layer_count(c, l);

	s->layer = l;
	s->expert = COLIBRI_FILE_NONE;
	if (p >= lc - no) {		/* GPT-OSS's roles (64..) end the layer */
		s->role = roles[n + p - (lc - no)];
	} else if (p < n) {
		s->role = roles[p];
	} else if (!cb_layer_is_moe(c, l)) {
		s->role = COLIBRI_T_MLP_GATE + (p - n);
	} else if (p == n) {
		s->role = COLIBRI_T_ROUTER;
	} else if (p - n - 1 < 3 * c->n_experts) {
		s->role = COLIBRI_T_EXPERT_GATE + (p - n - 1) % 3;
		s->expert = (p - n - 1) / 3;
	} else {
		shared_roles(c, roles);
		s->role = roles[p - n - 1 - 3 * c->n_experts];
	}
	cb_role_shape(c, s->role, &s->rows, &s->cols, &s->vector);
}

static void slot_global(const struct cb_model_config *c, cb_u32 p,
			struct cb_format_slot *s)
{
	static const cb_u32 g[3] = {
		COLIBRI_T_EMBED, COLIBRI_T_FINAL_NORM, COLIBRI_T_LM_HEAD
	};

	s->role = g[p];
	s->layer = COLIBRI_FILE_NONE;
	s->expert = COLIBRI_FILE_NONE;
	cb_role_shape(c, s->role, &s->rows, &s->cols, &s->vector);
}

/* Walks the canonical order one tensor at a time, O(1) per step. */
struct slot_iter {
	cb_u32 i;	/* next index */
	cb_u32 l;	/* current layer */
	cb_u32 p;	/* next position inside it */
	cb_u32 lc;	/* tensors of layer l */
};

static void iter_init(const struct cb_model_config *c, struct slot_iter *it)
{
	it->i = 0;
	it->l = 0;
	it->p = 0;
	it->lc = layer_count(c, 0);
}

static void iter_next(const struct cb_model_config *c, struct slot_iter *it,
		      struct cb_format_slot *s)
{
	if (it->i < n_global(c)) {
		slot_global(c, it->i, s);
	} else {
		if (it->p == it->lc) {
			it->l++;
			it->p = 0;
			it->lc = layer_count(c, it->l);
		}
		slot_in_layer(c, it->l, it->p++, s);
	}
	it->i++;
}

/* ---- config ----------------------------------------------------------- */

static void config_from_file(const cb_u8 *h, struct cb_model_config *c)
{
	cb_u32 i, mla[CB_MLA_WORDS], delta[CB_DELTA_WORDS];

	c->arch = rd32(h, COFF(arch));
	c->vocab_size = rd32(h, COFF(vocab_size));
	c->hidden = rd32(h, COFF(hidden));
	c->n_layers = rd32(h, COFF(n_layers));
	c->n_heads = rd32(h, COFF(n_heads));
	c->n_kv_heads = rd32(h, COFF(n_kv_heads));
	c->head_dim = rd32(h, COFF(head_dim));
	c->expert_ffn = rd32(h, COFF(expert_ffn));
	c->n_experts = rd32(h, COFF(n_experts));
	c->top_k = rd32(h, COFF(top_k));
	c->norm_topk_prob = rd32(h, COFF(norm_topk_prob));
	c->shared_ffn = rd32(h, COFF(shared_ffn));
	c->shared_gate = rd32(h, COFF(shared_gate));
	c->dense_ffn = rd32(h, COFF(dense_ffn));
	c->decoder_sparse_step = rd32(h, COFF(decoder_sparse_step));
	c->rope_layout = rd32(h, COFF(rope_layout));
	c->rope_theta_bits = rd32(h, COFF(rope_theta_bits));
	c->rms_eps_bits = rd32(h, COFF(rms_eps_bits));
	c->clip_qkv_bits = rd32(h, COFF(clip_qkv_bits));
	c->qkv_bias = rd32(h, COFF(qkv_bias));
	c->qk_norm = rd32(h, COFF(qk_norm));
	c->tied_embeddings = rd32(h, COFF(tied_embeddings));
	c->max_context = rd32(h, COFF(max_context));
	c->rope_dim = rd32(h, COFF(rope_dim));
	for (i = 0; i < 4; i++)
		c->mlp_only_layers[i] = rd64(h, COFF(mlp_only_layers) + 8 * i);
	c->rope_scaling.kind = rd32(h, ROFF(kind));
	c->rope_scaling.factor_bits = rd32(h, ROFF(factor_bits));
	c->rope_scaling.orig_context = rd32(h, ROFF(orig_context));
	c->rope_scaling.beta_fast_bits = rd32(h, ROFF(beta_fast_bits));
	c->rope_scaling.beta_slow_bits = rd32(h, ROFF(beta_slow_bits));
	c->rope_scaling.mscale_bits = rd32(h, ROFF(mscale_bits));
	c->rope_scaling.mscale_all_dim_bits = rd32(h, ROFF(mscale_all_dim_bits));
	c->rope_scaling.flags = rd32(h, ROFF(flags));
	/* the GPT-OSS words: all zero for the others (cb_config_check() says) */
	for (i = 0; i < sizeof(c->oss) / 4; i++)
		((cb_u32 *)&c->oss)[i] = rd32(h, HOFF(ext_gpt_oss) + 4 * i);
	for (i = 0; i < CB_MLA_WORDS; i++)
		mla[i] = rd32(h, HOFF(ext_mla) + 4 * i);
	cb_mla_config_from_words(&c->mla, mla);
	for (i = 0; i < CB_DELTA_WORDS; i++)
		delta[i] = rd32(h, HOFF(ext_delta) + 4 * i);
	cb_delta_config_from_words(&c->delta, delta);
}

void cb_format_rope_to_file(const struct cb_model_config *c,
			    struct colibri_file_rope_scaling *f)
{
	f->kind = c->rope_scaling.kind;
	f->factor_bits = c->rope_scaling.factor_bits;
	f->orig_context = c->rope_scaling.orig_context;
	f->beta_fast_bits = c->rope_scaling.beta_fast_bits;
	f->beta_slow_bits = c->rope_scaling.beta_slow_bits;
	f->mscale_bits = c->rope_scaling.mscale_bits;
	f->mscale_all_dim_bits = c->rope_scaling.mscale_all_dim_bits;
	f->flags = c->rope_scaling.flags;
}

void cb_format_config_to_file(const struct cb_model_config *c,
			      struct colibri_file_config *f)
{
	cb_u8 *p = (cb_u8 *)f;
	cb_u32 i;

	for (i = 0; i < sizeof(*f); i++)
		p[i] = 0;
	f->arch = c->arch;
	f->vocab_size = c->vocab_size;
	f->hidden = c->hidden;
	f->n_layers = c->n_layers;
	f->n_heads = c->n_heads;
	f->n_kv_heads = c->n_kv_heads;
	f->head_dim = c->head_dim;
	f->expert_ffn = c->expert_ffn;
	f->n_experts = c->n_experts;
	f->top_k = c->top_k;
	f->norm_topk_prob = c->norm_topk_prob;
	f->shared_ffn = c->shared_ffn;
	f->shared_gate = c->shared_gate;
	f->dense_ffn = c->dense_ffn;
	f->decoder_sparse_step = c->decoder_sparse_step;
	f->rope_layout = c->rope_layout;
	f->rope_theta_bits = c->rope_theta_bits;
	f->rms_eps_bits = c->rms_eps_bits;
	f->clip_qkv_bits = c->clip_qkv_bits;
	f->qkv_bias = c->qkv_bias;
	f->qk_norm = c->qk_norm;
	f->tied_embeddings = c->tied_embeddings;
	f->max_context = c->max_context;
	f->rope_dim = c->rope_dim;
	for (i = 0; i < 4; i++)
		f->mlp_only_layers[i] = c->mlp_only_layers[i];
}

/* ---- public: counting and indexing ----------------------------------- */

cb_u32 cb_format_tensor_count(const struct cb_model_config *c)
{
	cb_u32 l, n;

	if (cb_config_check(c, CB_NULL, 0))
		return 0;
	n = n_global(c);
	for (l = 0; l < c->n_layers; l++)
		n += layer_count(c, l);
	return n;
}

int cb_format_tensor_slot(const struct cb_model_config *c, cb_u32 index,
			  struct cb_format_slot *s)
{
	cb_u32 l, n;

	if (cb_config_check(c, CB_NULL, 0))
		return -CB_EINVAL;
	if (index < n_global(c)) {
		slot_global(c, index, s);
		return 0;
	}
	index -= n_global(c);
	for (l = 0; l < c->n_layers; l++) {
		n = layer_count(c, l);
		if (index < n) {
			slot_in_layer(c, l, index, s);
			return 0;
		}
		index -= n;
	}
	return -CB_EINVAL;
}

cb_s64 cb_format_tensor_index(const struct cb_model_config *c, cb_u32 role,
			      cb_u32 layer, cb_u32 expert)
{
	cb_u32 roles[16], n, l, i;
	cb_s64 base;

	if (cb_config_check(c, CB_NULL, 0))
		return -1;
	if (layer == COLIBRI_FILE_NONE) {
		if (expert != COLIBRI_FILE_NONE)
			return -1;
		for (i = 0; i < n_global(c); i++)
			if ((i == 0 && role == COLIBRI_T_EMBED) ||
			    (i == 1 && role == COLIBRI_T_FINAL_NORM) ||
			    (i == 2 && role == COLIBRI_T_LM_HEAD))
				return i;
		return -1;
	}
	if (layer >= c->n_layers)
		return -1;
	base = n_global(c);
	for (l = 0; l < layer; l++)
		base += layer_count(c, l);
	n = cb_gpt_oss_roles(c, roles);
	for (i = 0; i < n; i++)
		if (roles[i] == role)
			return expert == COLIBRI_FILE_NONE ?
			       base + layer_count(c, layer) - n + i : -1;
	n = attn_roles(c, layer, roles);
	if (role == COLIBRI_T_EXPERT_GATE || role == COLIBRI_T_EXPERT_UP ||
	    role == COLIBRI_T_EXPERT_DOWN) {
		if (!cb_layer_is_moe(c, layer) || expert >= c->n_experts)
			return -1;
		return base + n + 1 + 3 * (cb_s64)expert + (role - COLIBRI_T_EXPERT_GATE);
	}
	if (expert != COLIBRI_FILE_NONE)
		return -1;
	for (i = 0; i < n; i++)
		if (roles[i] == role)
			return base + i;
	if (!cb_layer_is_moe(c, layer)) {
		if (role >= COLIBRI_T_MLP_GATE && role <= COLIBRI_T_MLP_DOWN)
			return base + n + (role - COLIBRI_T_MLP_GATE);
		return -1;
	}
	if (role == COLIBRI_T_ROUTER)
		return base + n;
	base += n + 1 + 3 * (cb_s64)c->n_experts;
	n = shared_roles(c, roles);
	for (i = 0; i < n; i++)
		if (roles[i] == role)
			return base + i;
	return -1;
}

/* ---- header ----------------------------------------------------------- */

static int is_pow2(cb_u32 x)
{
	return x && !(x & (x - 1));
}

static int check_token_id(cb_s32 id, const struct cb_model_config *c)
{
	return id == -1 || (id >= 0 && (cb_u32)id < c->vocab_size);
}

#define HFAIL(...) cb_why(why, whylen, -CB_EINVAL, "header: " __VA_ARGS__)
#define HOVF(...) cb_why(why, whylen, -CB_EOVERFLOW, "header: " __VA_ARGS__)

static int check_name(const cb_u8 *h, struct cb_format_info *info, char *why,
		      cb_u32 whylen)
{
	cb_u32 i, end = COLIBRI_FILE_NAME_LEN;

	for (i = 0; i < COLIBRI_FILE_NAME_LEN; i++) {
		cb_u8 ch = h[HOFF(name) + i];

		if (i >= end) {
			if (ch)
				return HFAIL("name: non-zero byte after its NUL");
			continue;
		}
		if (!ch)
			end = i;
		else if (ch < 0x20 || ch == 0x7f)
			return HFAIL("name: control character at byte %u", i);
		info->name[i] = (char)ch;
	}
	if (end == COLIBRI_FILE_NAME_LEN)
		return HFAIL("name is not NUL-terminated");
	return 0;
}

static int check_tokenizer(const cb_u8 *h, struct cb_format_info *info,
			   char *why, cb_u32 whylen)
{
	cb_u64 end;

	info->tok_kind = rd32(h, HOFF(tok_kind));
	info->tok_flags = rd32(h, HOFF(tok_flags));
	info->tok_offset = rd64(h, HOFF(tok_offset));
	info->tok_size = rd64(h, HOFF(tok_size));
	info->tok_crc32c = rd32(h, HOFF(tok_crc32c));
	info->bos_id = (cb_s32)rd32(h, HOFF(bos_id));
	info->eos_id = (cb_s32)rd32(h, HOFF(eos_id));
	info->pad_id = (cb_s32)rd32(h, HOFF(pad_id));

	if (info->tok_flags & ~COLIBRI_TOK_F_ALL)
		return HFAIL("unknown tok_flags %u", info->tok_flags);
	if (!check_token_id(info->bos_id, &info->cfg) ||
	    !check_token_id(info->eos_id, &info->cfg) ||
	    !check_token_id(info->pad_id, &info->cfg))
		return HFAIL("bos/eos/pad id outside the vocabulary (%d %d %d)",
			     info->bos_id, info->eos_id, info->pad_id);
	if ((info->tok_flags & COLIBRI_TOK_F_ADD_BOS) && info->bos_id < 0)
		return HFAIL("add_bos set without a bos id");
	if ((info->tok_flags & COLIBRI_TOK_F_ADD_EOS) && info->eos_id < 0)
		return HFAIL("add_eos set without an eos id");
	if (info->tok_kind == COLIBRI_TOK_NONE) {
		if (info->tok_offset || info->tok_size || info->tok_crc32c)
			return HFAIL("no tokenizer but tokenizer offset/size/crc set");
		return 0;
	}
	if (info->tok_kind != COLIBRI_TOK_HF_JSON)
		return HFAIL("unknown tokenizer kind %u", info->tok_kind);
	if (!info->tok_size || info->tok_size > COLIBRI_FILE_MAX_TOKENIZER)
		return HFAIL("tokenizer size %L outside 1..%u", info->tok_size,
			     COLIBRI_FILE_MAX_TOKENIZER);
	if (info->tok_offset < info->dir_end)
		return HFAIL("tokenizer at %L overlaps header or directory (end %L)",
			     info->tok_offset, info->dir_end);
	if (__builtin_add_overflow(info->tok_offset, info->tok_size, &end) ||
	    end > info->data_offset)
		return HOVF("tokenizer [%L, +%L) runs into the data region at %L",
			    info->tok_offset, info->tok_size, info->data_offset);
	return 0;
}

/* The optional chat template: like the tokenizer, between directory and data. */
static int check_chat_template(const cb_u8 *h, cb_u64 flags, struct cb_format_info *info,
			       char *why, cb_u32 whylen)
{
	cb_u64 end, tok_end = info->tok_offset + info->tok_size;

	info->tmpl_offset = rd64(h, HOFF(tmpl_offset));
	info->tmpl_size = rd64(h, HOFF(tmpl_size));
	info->tmpl_crc32c = rd32(h, HOFF(tmpl_crc32c));
	if (!(flags & COLIBRI_FILE_F_CHAT_TEMPLATE)) {
		if (info->tmpl_offset || info->tmpl_size || info->tmpl_crc32c)
			return HFAIL("no chat template but its offset/size/crc set");
		return 0;
	}
	if (!info->tmpl_size || info->tmpl_size > COLIBRI_FILE_MAX_CHAT_TEMPLATE)
		return HFAIL("chat template size %L outside 1..%u", info->tmpl_size,
			     COLIBRI_FILE_MAX_CHAT_TEMPLATE);
	if (info->tmpl_offset < info->dir_end)
		return HFAIL("chat template at %L overlaps header or directory (end %L)",
			     info->tmpl_offset, info->dir_end);
	if (__builtin_add_overflow(info->tmpl_offset, info->tmpl_size, &end) ||
	    end > info->data_offset)
		return HOVF("chat template [%L, +%L) runs into the data region at %L",
			    info->tmpl_offset, info->tmpl_size, info->data_offset);
	/* tok_end cannot wrap: check_tokenizer() bounded it by data_offset */
	if (info->tok_size && info->tmpl_offset < tok_end && info->tok_offset < end)
		return HFAIL("chat template [%L, +%L) overlaps the tokenizer",
			     info->tmpl_offset, info->tmpl_size);
	return 0;
}

int cb_format_check_header(const void *buf, cb_u64 len, cb_u64 file_size,
			   struct cb_format_info *info, char *why, cb_u32 whylen)
{
	static const cb_u8 magic[COLIBRI_FILE_MAGIC_LEN] = COLIBRI_FILE_MAGIC;
	const cb_u8 *h = buf;
	cb_u32 i, v, expect;
	cb_u64 flags, x;
	cb_u8 *zp = (cb_u8 *)info;
	int r;

	for (i = 0; i < sizeof(*info); i++)
		zp[i] = 0;
	if (!buf || len < COLIBRI_FILE_HEADER_SIZE || file_size < COLIBRI_FILE_HEADER_SIZE)
		return HFAIL("file shorter than the %u-byte header",
			     COLIBRI_FILE_HEADER_SIZE);
	for (i = 0; i < COLIBRI_FILE_MAGIC_LEN; i++)
		if (h[i] != magic[i])
			return HFAIL("bad magic (not a .colibri file)");
	v = rd32(h, HOFF(version));
	if (v != COLIBRI_FILE_VERSION)
		return HFAIL("format version %u not supported (this reader knows %u)",
			     v, COLIBRI_FILE_VERSION);
	v = rd32(h, HOFF(header_size));
	if (v != COLIBRI_FILE_HEADER_SIZE)
		return HFAIL("header_size %u, expected %u", v, COLIBRI_FILE_HEADER_SIZE);
	flags = rd64(h, HOFF(flags));
	if (flags & ~COLIBRI_FILE_F_ALL)
		return HFAIL("unknown flags set");
	/* ext_gpt_oss, ext_mla, ext_delta: the config's (cb_config_check()) */
	for (i = 0; i < 8; i++)
		if (rd32(h, COFF(reserved) + 4 * i))
			return HFAIL("config reserved word %u is not zero", i);

	info->file_size = rd64(h, HOFF(file_size));
	if (info->file_size != file_size)
		return HOVF("file_size field %L but the file has %L bytes",
			    info->file_size, file_size);
	if (file_size > COLIBRI_FILE_MAX_SIZE)
		return HOVF("file of %L bytes above the %L limit", file_size,
			    (cb_u64)COLIBRI_FILE_MAX_SIZE);

	config_from_file(h, &info->cfg);
	r = cb_config_check(&info->cfg, why, whylen);
	if (r)
		return r;

	v = rd32(h, HOFF(tensor_entry_size));
	if (v != COLIBRI_FILE_TENSOR_SIZE)
		return HFAIL("tensor_entry_size %u, expected %u", v,
			     COLIBRI_FILE_TENSOR_SIZE);
	info->dir_offset = rd64(h, HOFF(dir_offset));
	if (info->dir_offset != COLIBRI_FILE_HEADER_SIZE)
		return HFAIL("directory at %L, expected right after the header (%u)",
			     info->dir_offset, COLIBRI_FILE_HEADER_SIZE);
	info->n_tensors = rd32(h, HOFF(n_tensors));
	expect = cb_format_tensor_count(&info->cfg);
	if (info->n_tensors != expect)
		return HFAIL("%u tensors, the config requires %u", info->n_tensors, expect);
	/* n_tensors < 2^20 here (256 layers * ~800), no overflow */
	info->dir_end = info->dir_offset + (cb_u64)info->n_tensors * COLIBRI_FILE_TENSOR_SIZE;
	if (info->dir_end > file_size)
		return HOVF("directory (end %L) beyond end of file (%L)", info->dir_end,
			    file_size);

	info->data_offset = rd64(h, HOFF(data_offset));
	info->data_size = rd64(h, HOFF(data_size));
	info->data_align = rd32(h, HOFF(data_align));
	if (info->data_offset % COLIBRI_FILE_DATA_ALIGN)
		return HFAIL("data_offset %L is not a multiple of %u", info->data_offset,
			     COLIBRI_FILE_DATA_ALIGN);
	if (info->data_offset < info->dir_end)
		return HFAIL("data region at %L overlaps the directory (end %L)",
			     info->data_offset, info->dir_end);
	if (__builtin_add_overflow(info->data_offset, info->data_size, &x) ||
	    x != file_size)
		return HOVF("data region [%L, +%L) does not end at end of file (%L)",
			    info->data_offset, info->data_size, file_size);
	if (!is_pow2(info->data_align) || info->data_align < COLIBRI_FILE_TENSOR_ALIGN_MIN ||
	    info->data_align > COLIBRI_FILE_TENSOR_ALIGN_MAX)
		return HFAIL("data_align %u is not a power of two in %u..%u",
			     info->data_align, COLIBRI_FILE_TENSOR_ALIGN_MIN,
			     COLIBRI_FILE_TENSOR_ALIGN_MAX);

	r = check_tokenizer(h, info, why, whylen);
	if (r)
		return r;
	r = check_chat_template(h, flags, info, why, whylen);
	if (r)
		return r;
	return check_name(h, info, why, whylen);
}

/* ---- directory -------------------------------------------------------- */

/* "tensor 17 (layer 2 expert 5 expert_up): " + the problem */
#define TFAIL(err, msg, ...)						\
	cb_why(why, whylen, err, "tensor %u (layer %d expert %d %s): " msg, i,	\
	     (int)s.layer, (int)s.expert, cb_format_role_name(s.role), ##__VA_ARGS__)

static int check_entry(const cb_u8 *e, cb_u32 i, const struct cb_format_slot *sp,
		       const struct cb_format_info *info, cb_u64 *prev_end,
		       char *why, cb_u32 whylen)
{
	struct cb_format_slot s = *sp;
	cb_u32 role = rd32(e, TOFF(role)), layer = rd32(e, TOFF(layer));
	cb_u32 expert = rd32(e, TOFF(expert)), dtype = rd32(e, TOFF(dtype));
	cb_u32 rows = rd32(e, TOFF(rows)), cols = rd32(e, TOFF(cols));
	cb_u64 off = rd64(e, TOFF(offset)), size = rd64(e, TOFF(size)), rb, want, end;
	cb_u32 k;

	if (role != s.role || layer != s.layer || expert != s.expert)
		return TFAIL(-CB_EINVAL,
			     "found role %u (%s) layer %d expert %d instead (missing, duplicate, unexpected or out of order)",
			     role,
			     cb_format_role_name(role), (int)layer, (int)expert);
	if (rd32(e, TOFF(flags)))
		return TFAIL(-CB_EINVAL, "unknown flags set");
	for (k = 0; k < 4; k++)
		if (rd32(e, TOFF(reserved) + 4 * k))
			return TFAIL(-CB_EINVAL, "reserved word %u is not zero", k);
	if (dtype >= CB_DT__COUNT)
		return TFAIL(-CB_EINVAL, "unknown dtype %u", dtype);
	if (rows != s.rows || cols != s.cols)
		return TFAIL(-CB_EINVAL, "shape [%u, %u], the config requires [%u, %u]",
			     rows, cols, s.rows, s.cols);
	if (s.vector && dtype != CB_DT_F32)
		return TFAIL(-CB_EINVAL, "norm/bias stored as %s, must be f32",
			     cb_dtype_name(dtype));
	rb = cb_dtype_row_bytes(dtype, cols);
	if (!rb)
		return TFAIL(-CB_EINVAL, "%s needs cols (%u) to be a multiple of %u",
			     cb_dtype_name(dtype), cols, CB_QK);
	if (__builtin_mul_overflow(rb, (cb_u64)rows, &want) || size != want)
		return TFAIL(-CB_EINVAL, "size %L, but %u rows of %s need %L", size, rows,
			     cb_dtype_name(dtype), want);
	if (off % info->data_align)
		return TFAIL(-CB_EINVAL, "offset %L not aligned to %u", off,
			     info->data_align);
	if (__builtin_add_overflow(off, size, &end) || end > info->data_size)
		return TFAIL(-CB_EOVERFLOW, "offset+size beyond end of file");
	if (off < *prev_end)
		return TFAIL(-CB_EINVAL, "overlaps the previous tensor (offset %L < %L)",
			     off, *prev_end);
	*prev_end = end;
	return 0;
}

static cb_u32 header_crc(const cb_u8 *h, cb_u64 dir_end)
{
	static const cb_u8 zero[4];
	cb_u32 crc;

	crc = cb_crc32c(0, h, COLIBRI_FILE_HEADER_CRC_OFFSET);
	crc = cb_crc32c(crc, zero, 4);
	return cb_crc32c(crc, h + COLIBRI_FILE_HEADER_CRC_OFFSET + 4,
			 (cb_size)(dir_end - COLIBRI_FILE_HEADER_CRC_OFFSET - 4));
}

int cb_format_check_directory(const void *buf, cb_u64 len, cb_u64 file_size,
			      struct cb_format_info *info, char *why, cb_u32 whylen)
{
	const cb_u8 *h = buf;
	struct cb_format_slot s;
	struct slot_iter it;
	cb_u64 prev_end = 0;
	cb_u32 i, crc;
	int r;

	r = cb_format_check_header(buf, len, file_size, info, why, whylen);
	if (r)
		return r;
	if (len < info->dir_end)
		return cb_why(why, whylen, -CB_EINVAL,
			    "directory: %L bytes given, the directory ends at %L", len,
			    info->dir_end);
	crc = header_crc(h, info->dir_end);
	if (crc != rd32(h, HOFF(header_crc32c)))
		return cb_why(why, whylen, -CB_EINVAL,
			    "header/directory checksum mismatch (corrupt file)");

	iter_init(&info->cfg, &it);
	for (i = 0; i < info->n_tensors; i++) {
		iter_next(&info->cfg, &it, &s);
		r = check_entry(h + info->dir_offset + (cb_u64)i * COLIBRI_FILE_TENSOR_SIZE,
				i, &s, info, &prev_end, why, whylen);
		if (r)
			return r;
	}
	return 0;
}

/* ---- binding ---------------------------------------------------------- */

static cb_u32 moe_layers(const struct cb_model_config *c)
{
	cb_u32 l, n = 0;

	for (l = 0; l < c->n_layers; l++)
		n += cb_layer_is_moe(c, l);
	return n;
}

cb_u64 cb_format_bind_size(const struct cb_format_info *info)
{
	const struct cb_model_config *c = &info->cfg;
	cb_u64 a = (cb_u64)c->n_layers * sizeof(struct cb_layer_weights);
	cb_u64 b = (cb_u64)moe_layers(c) * c->n_experts * sizeof(struct cb_expert_weights);

	return CB_ALIGN(a, (cb_u64)64) + CB_ALIGN(b, (cb_u64)64) + 64;
}

int cb_format_bind(const struct cb_format_info *info, const void *dir,
		   const void *data, cb_u64 data_size, void *mem, cb_u64 mem_size,
		   struct cb_model_config *cfg, struct cb_model_weights *w,
		   char *why, cb_u32 whylen)
{
	const struct cb_model_config *c = &info->cfg;
	struct cb_layer_weights *layers;
	struct cb_expert_weights *experts;
	struct cb_format_slot s;
	struct slot_iter it;
	cb_u8 *m = mem, *wp = (cb_u8 *)w;
	cb_u64 need = cb_format_bind_size(info), i, end;
	cb_u32 l, k = 0;

	if (!dir || !data || !mem || !cfg || !w)
		return cb_why(why, whylen, -CB_EINVAL, "bind: NULL argument");
	if ((cb_uptr)data % 64 || (cb_uptr)mem % 8)
		return cb_why(why, whylen, -CB_EINVAL, "bind: data or table memory misaligned");
	if (data_size < info->data_size)
		return cb_why(why, whylen, -CB_EINVAL, "bind: %L data bytes, the file has %L",
			    data_size, info->data_size);
	if (mem_size < need)
		return cb_why(why, whylen, -CB_ENOMEM, "bind: %L table bytes, need %L",
			    mem_size, need);
	for (i = 0; i < need; i++)
		m[i] = 0;
	for (i = 0; i < sizeof(*w); i++)
		wp[i] = 0;
	m = (cb_u8 *)CB_ALIGN((cb_uptr)m, (cb_uptr)64);
	layers = (struct cb_layer_weights *)m;
	experts = (struct cb_expert_weights *)(m + CB_ALIGN((cb_u64)c->n_layers *
						  sizeof(*layers), (cb_u64)64));
	for (l = 0; l < c->n_layers; l++)
		if (cb_layer_is_moe(c, l))
			layers[l].experts = experts + (cb_u64)k++ * c->n_experts;

	if (cb_config_check(c, why, whylen) || info->n_tensors != cb_format_tensor_count(c))
		return cb_why(why, whylen, -CB_EINVAL, "bind: header not checked");
	iter_init(c, &it);
	for (i = 0; i < info->n_tensors; i++) {
		const cb_u8 *e = (const cb_u8 *)dir + info->dir_offset +
				 i * COLIBRI_FILE_TENSOR_SIZE;
		cb_u64 off = rd64(e, TOFF(offset)), size = rd64(e, TOFF(size));
		struct cb_tensor *t;

		iter_next(c, &it, &s);
		if (__builtin_add_overflow(off, size, &end) || end > info->data_size)
			return cb_why(why, whylen, -CB_EINVAL, "bind: tensor %L out of range", i);
		t = cb_role_tensor(w, layers, c->n_layers, c->n_experts, &s);
		if (!t)
			return cb_why(why, whylen, -CB_EINVAL, "bind: tensor %L has no place", i);
		t->data = (const cb_u8 *)data + off;
		t->dtype = rd32(e, TOFF(dtype));
		t->rows = rd32(e, TOFF(rows));
		t->cols = rd32(e, TOFF(cols));
	}
	w->layers = layers;
	*cfg = *c;
	if (cb_engine_check_model(cfg, w))
		return cb_why(why, whylen, -CB_EINVAL, "bind: the engine rejects the model");
	return 0;
}

int cb_format_tensor_crc_ok(const void *dir, const struct cb_format_info *info,
			    cb_u32 i, const void *data)
{
	const cb_u8 *e;
	cb_u64 off, size, end;

	if (i >= info->n_tensors)
		return 0;
	e = (const cb_u8 *)dir + info->dir_offset + (cb_u64)i * COLIBRI_FILE_TENSOR_SIZE;
	off = rd64(e, TOFF(offset));
	size = rd64(e, TOFF(size));
	if (__builtin_add_overflow(off, size, &end) || end > info->data_size)
		return 0;
	return cb_crc32c(0, (const cb_u8 *)data + off, (cb_size)size) == rd32(e, TOFF(crc32c));
}
