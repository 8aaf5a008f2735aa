// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_arch.c - the table of architectures (kmod/engine/arch/): every
 * uapi number has its entry at its own index, names are unique, the
 * lookups by the names model files use find what the importers need, and
 * the kinds agree with the config fields they go with.
 */
#include <string.h>

#include "cb_test.h"
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_role.h"
#include "colibri_format.h"
#include "import/gguf_names.h"
#include "import/hf_names.h"

static void test_every_id_has_its_entry(void)
{
	cb_u32 i;

	/* uapi's numbers run 0 to COLIBRI_ARCH_QWEN3_NEXT */
	CB_CHECK(cb_arch_count == COLIBRI_ARCH_QWEN3_NEXT + 1, "%u entries for uapi's %u numbers",
		 cb_arch_count, COLIBRI_ARCH_QWEN3_NEXT + 1);
	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_arch_of(i);

		CB_CHECK(a && a->id == i, "entry %u has id %u", i, a ? a->id : 0);
		CB_CHECK(a && a->name && a->hf_classes && a->hf_classes[0] && a->hf_model_type,
			 "entry %u lacks a name", i);
	}
	CB_CHECK(!cb_arch_of(cb_arch_count) && !cb_arch_of(~0u), "an unknown id has an entry");
}

static void test_names_are_unique_and_found(void)
{
	const char *const *c;
	cb_u32 i, j;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];

		CB_CHECK(cb_arch_by_name(a->name) == a, "%s: by name", a->name);
		for (c = a->hf_classes; *c; c++)
			CB_CHECK(cb_arch_by_hf_class(*c) == a, "%s: by class %s", a->name, *c);
		for (j = 0; j < i; j++) {
			CB_CHECK(strcmp(a->name, cb_archs[j]->name), "name %s twice", a->name);
			CB_CHECK(strcmp(a->hf_model_type, cb_archs[j]->hf_model_type),
				 "model_type %s twice", a->hf_model_type);
		}
	}
	CB_CHECK(!cb_arch_by_name("gpt2") && !cb_arch_by_name("") && !cb_arch_by_name(NULL),
		 "an unknown name is found");
	CB_CHECK(!cb_arch_by_hf_class("GPT2LMHeadModel"), "an unknown class is found");
	CB_CHECK(cb_arch_by_hf_class("MistralForCausalLM") == cb_arch_of(COLIBRI_ARCH_LLAMA),
		 "Mistral is read as Llama");
}

/* GGUF: llama and Mixtral share "llama"; deepseek2 is V2 until its gating says. */
static void test_gguf_names(void)
{
	static const struct {
		const char *gguf;
		int moe;
		cb_u32 id;
	} want[] = {
		{ "llama", 0, COLIBRI_ARCH_LLAMA },
		{ "llama", 1, COLIBRI_ARCH_MIXTRAL },
		{ "qwen2moe", 1, COLIBRI_ARCH_QWEN2_MOE },
		{ "qwen3moe", 1, COLIBRI_ARCH_QWEN3_MOE },
		{ "olmoe", 1, COLIBRI_ARCH_OLMOE },
		{ "gpt-oss", 1, COLIBRI_ARCH_GPT_OSS },
		{ "deepseek2", 1, COLIBRI_ARCH_DEEPSEEK_V2 },
		{ "deepseek2", 0, COLIBRI_ARCH_DEEPSEEK_V2 },
		{ "glm4moe", 1, COLIBRI_ARCH_GLM4_MOE },
		{ "qwen35moe", 1, COLIBRI_ARCH_QWEN3_5_MOE },
		{ "qwen3moe", 0, COLIBRI_ARCH_QWEN3_MOE },
	};
	cb_u32 i;

	for (i = 0; i < CB_ARRAY_SIZE(want); i++) {
		const struct cb_arch_desc *a = cb_arch_by_gguf(want[i].gguf, want[i].moe);

		CB_CHECK(a && a->id == want[i].id, "%s (moe %d): %s", want[i].gguf, want[i].moe,
			 a ? a->name : "none");
	}
	CB_CHECK(!cb_arch_by_gguf("gpt-neox", 0) && !cb_arch_by_gguf(NULL, 1),
		 "an unknown GGUF architecture is found");
	for (i = 0; i < cb_arch_count; i++)
		CB_CHECK(cb_archs[i]->gguf_expert_ffn_key, "%s: no expert FFN key", cb_archs[i]->name);
	/* llama.cpp's own names: GPT-OSS's post-attention norm */
	CB_CHECK(!strcmp(cb_arch_name_in(cb_arch_of(COLIBRI_ARCH_GPT_OSS)->gguf_names,
					 COLIBRI_T_FFN_NORM, "x"), "post_attention_norm.weight") &&
		 !strcmp(cb_arch_name_in(cb_arch_of(COLIBRI_ARCH_GPT_OSS)->gguf_names, COLIBRI_T_WQ,
					 "x"), "x") &&
		 !strcmp(cb_arch_name_in(cb_arch_of(COLIBRI_ARCH_MIXTRAL)->gguf_names,
					 COLIBRI_T_FFN_NORM, "x"), "x"), "GGUF tensor names");
	/* What the GGUF importer has always assumed of their files. */
	CB_CHECK(cb_arch_of(COLIBRI_ARCH_LLAMA)->gguf_rope == CB_ROPE_INTERLEAVED &&
		 cb_arch_of(COLIBRI_ARCH_DEEPSEEK_V2)->gguf_rope == CB_ROPE_INTERLEAVED &&
		 cb_arch_of(COLIBRI_ARCH_QWEN2_MOE)->gguf_rope == CB_ROPE_NEOX &&
		 cb_arch_of(COLIBRI_ARCH_GPT_OSS)->gguf_rope == CB_ROPE_NEOX, "GGUF RoPE layouts");
}

/* The kinds say what the config's own fields say. */
static void test_kinds(void)
{
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];

		CB_CHECK((a->ffn == CB_FFN_DENSE) == (a->router == CB_ROUTER_NONE),
			 "%s: a router without experts, or experts without one", a->name);
		CB_CHECK(a->attn <= CB_ATTN_GATED_DELTA && a->ffn <= CB_FFN_MOE_SHARED_GATED &&
			 a->router <= CB_ROUTER_SCORED && a->expert <= CB_EXPERT_SWIGLU_OSS &&
			 a->qk_norm <= CB_QK_NORM_FULL && a->gguf_rope <= CB_ROPE_INTERLEAVED,
			 "%s: a kind out of range", a->name);
		CB_CHECK(cb_arch_uses_oss(a) == (i == COLIBRI_ARCH_GPT_OSS),
			 "%s: GPT-OSS's config block", a->name);
		CB_CHECK((a->attn == CB_ATTN_MLA) ==
			 (i == COLIBRI_ARCH_DEEPSEEK_V2 || i == COLIBRI_ARCH_DEEPSEEK_V3),
			 "%s: MLA", a->name);
	}
	CB_CHECK(cb_arch_of(COLIBRI_ARCH_QWEN3_MOE)->qk_norm == CB_QK_NORM_HEAD &&
		 cb_arch_of(COLIBRI_ARCH_OLMOE)->qk_norm == CB_QK_NORM_FULL &&
		 cb_arch_of(COLIBRI_ARCH_MIXTRAL)->qk_norm == CB_QK_NORM_NONE, "q/k norms");
}

/* Every key list ends, names a field inside the config, and reads a key once. */
static void test_hf_config_keys(void)
{
	cb_u32 i, j, n;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];
		const struct cb_arch_hf_key *k = a->hf_config;

		CB_CHECK(k, "%s: no key list", a->name);
		for (n = 0; k && k[n].how != CB_HF_END && n < 64; n++) {
			cb_u32 size = k[n].how == CB_HF_LAYERS ? sizeof(cb_u64) : sizeof(cb_u32);

			CB_CHECK(k[n].how <= CB_HF_LAYERS, "%s: key %u: how %u", a->name, n,
				 k[n].how);
			CB_CHECK(k[n].field + size <= sizeof(struct cb_model_config) &&
				 k[n].field % size == 0, "%s: key %u: field %u", a->name, n,
				 k[n].field);
			CB_CHECK((k[n].how == CB_HF_SET) == !k[n].key, "%s: key %u", a->name, n);
			for (j = 0; j < n && k[n].key; j++)
				CB_CHECK(!k[j].key || strcmp(k[j].key, k[n].key),
					 "%s: '%s' twice", a->name, k[n].key);
		}
		CB_CHECK(n < 64, "%s: key list does not end", a->name);
		/* a MoE architecture reads its experts (a scored router's: hf_scored.c) */
		if (a->ffn != CB_FFN_DENSE && a->router != CB_ROUTER_SCORED)
			for (j = 0; j < n; j++)
				if (k[j].field == CB_HF_FIELD(n_experts))
					break;
		CB_CHECK(a->ffn == CB_FFN_DENSE || a->router == CB_ROUTER_SCORED || j < n,
			 "%s: no key fills n_experts", a->name);
	}
}

/* HF names: the usual ones and the architectures' own, experts numbered. */
static void test_hf_names(void)
{
	static const struct {
		cb_u32 arch, role, layer, expert;
		const char *want;
	} want[] = {
		{ COLIBRI_ARCH_QWEN3_MOE, COLIBRI_T_EMBED, 0, 0, "model.embed_tokens.weight" },
		{ COLIBRI_ARCH_QWEN3_MOE, COLIBRI_T_WQ, 3, 0, "model.layers.3.self_attn.q_proj.weight" },
		{ COLIBRI_ARCH_QWEN3_MOE, COLIBRI_T_EXPERT_DOWN, 1, 17,
		  "model.layers.1.mlp.experts.17.down_proj.weight" },
		{ COLIBRI_ARCH_MIXTRAL, COLIBRI_T_EXPERT_UP, 2, 5,
		  "model.layers.2.block_sparse_moe.experts.5.w3.weight" },
		{ COLIBRI_ARCH_MIXTRAL, COLIBRI_T_ROUTER, 0, 0, "model.layers.0.block_sparse_moe.gate.weight" },
		{ COLIBRI_ARCH_QWEN2_MOE, COLIBRI_T_SHARED_UP, 4, 0,
		  "model.layers.4.mlp.shared_expert.up_proj.weight" },
		{ COLIBRI_ARCH_DEEPSEEK_V3, COLIBRI_T_SHARED_UP, 4, 0,
		  "model.layers.4.mlp.shared_experts.up_proj.weight" },
		{ COLIBRI_ARCH_DEEPSEEK_V2, COLIBRI_T_MLA_V_B, 1, 0,
		  "model.layers.1.self_attn.kv_b_proj.weight" },
		{ COLIBRI_ARCH_GPT_OSS, COLIBRI_T_ROUTER, 6, 0, "model.layers.6.mlp.router.weight" },
		{ COLIBRI_ARCH_GPT_OSS, COLIBRI_T_ATTN_SINKS, 6, 0, "model.layers.6.self_attn.sinks" },
	};
	char buf[256];
	cb_u32 i;

	for (i = 0; i < CB_ARRAY_SIZE(want); i++) {
		struct cb_model_config c = { .arch = want[i].arch };
		int r = hf_tensor_name(&c, want[i].role, want[i].layer, want[i].expert, buf,
				       sizeof(buf));

		CB_CHECK(!r && !strcmp(buf, want[i].want), "%s: %s, not %s",
			 cb_arch_of(want[i].arch)->name, r ? "none" : buf, want[i].want);
	}
	/* a short buffer and a role HF has none of: -1 */
	{
		struct cb_model_config c = { .arch = COLIBRI_ARCH_MIXTRAL };

		CB_CHECK(hf_tensor_name(&c, COLIBRI_T_WQ, 0, 0, buf, 8) == -1, "short buffer");
		CB_CHECK(hf_tensor_name(&c, COLIBRI_T_EXPERT_GATE_BIAS, 0, 0, buf, sizeof(buf)) == -1,
			 "a fused GPT-OSS bias has an HF name");
	}
	/* an architecture's expert names hold one %u, its other names none */
	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_name *n;

		for (n = cb_archs[i]->hf_names; n && n->name; n++) {
			const char *p = strstr(n->name, "%u");
			int expert = cb_role_scope(n->role) == CB_ROLE_EXPERT;

			CB_CHECK(expert ? p && !strstr(p + 2, "%") : !strchr(n->name, '%'),
				 "%s: %s", cb_archs[i]->name, n->name);
		}
	}
}

/* GGUF's tensor names: llama.cpp's, blk.N. for a layer's, GPT-OSS's own ffn_norm. */
static void test_gguf_tensor_names(void)
{
	static const struct {
		cb_u32 arch, role, layer;
		const char *want;
	} want[] = {
		{ COLIBRI_ARCH_MIXTRAL, COLIBRI_T_EMBED, 0, "token_embd.weight" },
		{ COLIBRI_ARCH_MIXTRAL, COLIBRI_T_LM_HEAD, 7, "output.weight" },
		{ COLIBRI_ARCH_QWEN3_MOE, COLIBRI_T_Q_NORM, 3, "blk.3.attn_q_norm.weight" },
		{ COLIBRI_ARCH_QWEN3_MOE, COLIBRI_T_EXPERT_DOWN, 1, "blk.1.ffn_down_exps.weight" },
		{ COLIBRI_ARCH_QWEN2_MOE, COLIBRI_T_SHARED_EXPERT_GATE, 4, "blk.4.ffn_gate_inp_shexp.weight" },
		{ COLIBRI_ARCH_LLAMA, COLIBRI_T_FFN_NORM, 2, "blk.2.ffn_norm.weight" },
		{ COLIBRI_ARCH_GPT_OSS, COLIBRI_T_FFN_NORM, 2, "blk.2.post_attention_norm.weight" },
		{ COLIBRI_ARCH_GPT_OSS, COLIBRI_T_EXPERT_UP_BIAS, 5, "blk.5.ffn_up_exps.bias" },
		{ COLIBRI_ARCH_DEEPSEEK_V3, COLIBRI_T_ROUTER_SEL_BIAS, 9, "blk.9.exp_probs_b.bias" },
	};
	char buf[256];
	cb_u32 i;

	for (i = 0; i < CB_ARRAY_SIZE(want); i++) {
		int r = gguf_tensor_name(cb_arch_of(want[i].arch), want[i].role, want[i].layer, buf,
					 sizeof(buf));

		CB_CHECK(!r && !strcmp(buf, want[i].want), "%s: %s, not %s",
			 cb_arch_of(want[i].arch)->name, r ? "none" : buf, want[i].want);
	}
	CB_CHECK(gguf_tensor_name(&cb_arch_mixtral, COLIBRI_T_WQ, 0, buf, 8) == -1, "short buffer");
	CB_CHECK(gguf_tensor_name(&cb_arch_mixtral, 200, 0, buf, sizeof(buf)) == -1, "role 200");
}

int main(void)
{
	CB_RUN(test_every_id_has_its_entry);
	CB_RUN(test_names_are_unique_and_found);
	CB_RUN(test_gguf_names);
	CB_RUN(test_kinds);
	CB_RUN(test_hf_config_keys);
	CB_RUN(test_hf_names);
	CB_RUN(test_gguf_tensor_names);
	return cb_test_done();
}
