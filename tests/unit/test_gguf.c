// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_gguf.c - the GGUF parser (userspace/lib/import/gguf.c) on hand-built
 * images: valid files, every prefix of a valid file, lying counts, lengths
 * and offsets, sizes that overflow 64 bits, and random corruption.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cb_test.h"
#include "import/gguf.h"
#include "import/gguf_pretok.h"
#include "quant/cb_quant.h"

struct img {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct img *b, const void *s, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void u32(struct img *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct img *b, uint64_t v) { put(b, &v, 8); }

static void str(struct img *b, const char *s)
{
	u64(b, strlen(s));
	put(b, s, strlen(s));
}

static void pad(struct img *b, size_t a)
{
	while (b->n % a)
		put(b, "", 1);
}

static void header(struct img *b, uint32_t version, uint64_t nt, uint64_t nkv)
{
	b->n = 0;
	put(b, "GGUF", 4);
	u32(b, version);
	u64(b, nt);
	u64(b, nkv);
}

static void kv_u32(struct img *b, const char *k, uint32_t v)
{
	str(b, k);
	u32(b, GGUF_VT_U32);
	u32(b, v);
}

static void tinfo(struct img *b, const char *name, uint32_t nd, const uint64_t *ne,
		  uint32_t type, uint64_t off)
{
	uint32_t i;

	str(b, name);
	u32(b, nd);
	for (i = 0; i < nd; i++)
		u64(b, ne[i]);
	u32(b, type);
	u64(b, off);
}

/*
 * A valid file: 4 metadata entries (u32, string, array of strings, f64) and
 * two tensors, an F32 [2][32] and a Q8_0 [3][32], alignment @align.
 */
static void valid(struct img *b, uint32_t version, uint32_t align)
{
	static const uint64_t ne1[2] = { 32, 2 }, ne2[2] = { 32, 3 };
	uint64_t off2 = (2 * 32 * 4 + align - 1) / align * align;
	double d = 0.25;
	size_t i;

	header(b, version, 2, align == 32 ? 4 : 5);
	kv_u32(b, "test.count", 7);
	str(b, "general.architecture");
	u32(b, GGUF_VT_STRING);
	str(b, "llama");
	str(b, "tok.list");
	u32(b, GGUF_VT_ARRAY);
	u32(b, GGUF_VT_STRING);
	u64(b, 3);
	str(b, "a");
	str(b, "");
	str(b, "ccc");
	str(b, "test.f64");
	u32(b, GGUF_VT_F64);
	put(b, &d, 8);
	if (align != 32)
		kv_u32(b, "general.alignment", align);
	tinfo(b, "w.f32", 2, ne1, GGUF_TT_F32, 0);
	tinfo(b, "w.q8", 2, ne2, GGUF_TT_Q8_0, off2);
	pad(b, align);
	for (i = 0; i < 2 * 32; i++) {
		float f = (float)i;

		put(b, &f, 4);
	}
	pad(b, align);
	for (i = 0; i < 3 * 34; i++)
		put(b, "\x11", 1);
}

static struct gguf_file *parse(const struct img *b, char *err, size_t n)
{
	err[0] = 0;
	return gguf_parse("mem.gguf", b->p, b->n, err, n);
}

/* Refused, with a message that names the image and contains @needle. */
#define REFUSED(b, needle)						\
	do {								\
		char e_[512];						\
		struct gguf_file *f_ = parse(b, e_, sizeof(e_));	\
		CB_CHECK(!f_, "accepted; wanted '%s'", needle);		\
		CB_CHECK(strstr(e_, "mem.gguf: ") == e_ && strstr(e_, needle), \
			 "message '%s' lacks '%s'", e_, needle);	\
		gguf_close(f_);						\
	} while (0)

static void test_valid_v3_and_v2(void)
{
	struct img b = { 0 };
	char err[256];
	uint32_t v;

	for (v = 2; v <= 3; v++) {
		struct gguf_file *f;
		const struct gguf_tensor *t;
		struct gguf_str *a, s;
		uint64_t u;
		float x;

		valid(&b, v, 32);
		f = parse(&b, err, sizeof(err));
		CB_CHECK(f, "v%u refused: %s", v, err);
		if (!f)
			continue;
		CB_CHECK(f->version == v && f->n_kv == 4 && f->n_tensors == 2, "counts");
		CB_CHECK(f->alignment == 32 && f->data_offset % 32 == 0, "alignment");
		t = gguf_find_tensor(f, "w.q8");
		CB_CHECK(t && t->ne[0] == 32 && t->ne[1] == 3 && t->ne[2] == 1 &&
			 t->nbytes == 3 * 34 && ((const uint8_t *)t->data)[0] == 0x11, "w.q8");
		t = gguf_find_tensor(f, "w.f32");
		CB_CHECK(t && t->nbytes == 256 && ((const float *)t->data)[5] == 5.0f, "w.f32");
		CB_CHECK(!gguf_find_tensor(f, "w.f3") && !gguf_find_tensor(f, "w.f32x"), "lookup");
		CB_CHECK(!gguf_get_uint(f, "test.count", &u) && u == 7, "get_uint");
		CB_CHECK(gguf_get_uint(f, "test.counts", &u) == -1, "absent key");
		CB_CHECK(gguf_get_uint(f, "general.architecture", &u) == -2, "wrong type");
		CB_CHECK(!gguf_get_f32(f, "test.f64", &x) && x == 0.25f, "f64 as f32");
		CB_CHECK(!gguf_get_str(f, "general.architecture", &s) && s.n == 5 &&
			 !memcmp(s.p, "llama", 5), "get_str");
		a = gguf_str_array(gguf_find_kv(f, "tok.list"));
		CB_CHECK(a && a[0].n == 1 && a[1].n == 0 && a[2].n == 3 &&
			 !memcmp(a[2].p, "ccc", 3), "string array");
		free(a);
		CB_CHECK(!gguf_str_array(gguf_find_kv(f, "test.count")), "not an array");
		gguf_close(f);
	}
	free(b.p);
}

static void test_custom_alignment(void)
{
	struct img b = { 0 };
	struct gguf_file *f;
	char err[256];

	valid(&b, 3, 256);
	f = parse(&b, err, sizeof(err));
	CB_CHECK(f && f->alignment == 256 && f->data_offset % 256 == 0, "alignment 256: %s", err);
	gguf_close(f);
	free(b.p);
}

static void test_bad_header(void)
{
	struct img b = { 0 };

	valid(&b, 3, 32);
	b.p[3] = 'X';
	REFUSED(&b, "magic");
	valid(&b, 1, 32);
	REFUSED(&b, "version 1");
	valid(&b, 4, 32);
	REFUSED(&b, "version 4");
	valid(&b, 0x03000000, 32);
	REFUSED(&b, "big-endian");
	header(&b, 3, 0, 0);
	b.n = 20;
	REFUSED(&b, "ends inside the GGUF header");
	free(b.p);
}

static void test_lying_counts(void)
{
	struct img b = { 0 };

	valid(&b, 3, 32);
	memcpy(b.p + 16, &(uint64_t){ UINT64_MAX }, 8);
	REFUSED(&b, "metadata entries (at most 4096");
	valid(&b, 3, 32);
	memcpy(b.p + 16, &(uint64_t){ 4000 }, 8);
	REFUSED(&b, "metadata entries, more than the file can hold");
	valid(&b, 3, 32);
	memcpy(b.p + 8, &(uint64_t){ 1ull << 60 }, 8);
	REFUSED(&b, "tensors (at most");
	valid(&b, 3, 32);
	memcpy(b.p + 8, &(uint64_t){ 100000 }, 8);
	REFUSED(&b, "tensors, more than the file can hold");
	/* one tensor fewer than there are: the data section is misplaced */
	valid(&b, 3, 32);
	memcpy(b.p + 8, &(uint64_t){ 3 }, 8);
	REFUSED(&b, "");
	free(b.p);
}

static void test_strings_past_eof(void)
{
	struct img b = { 0 };

	/* key length beyond the file, and one that would wrap the offset */
	header(&b, 3, 0, 1);
	u64(&b, 1000);
	put(&b, "0123456789012345678901234567890123456789", 40);
	REFUSED(&b, "key runs past the end of the file");
	header(&b, 3, 0, 1);
	u64(&b, UINT64_MAX - 3);
	put(&b, "abcdefgh", 8);
	REFUSED(&b, "key runs past the end of the file");
	/* string value */
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, GGUF_VT_STRING);
	u64(&b, UINT64_MAX);
	put(&b, "abcdefghijklmnopq", 17);
	REFUSED(&b, "'k': value runs past the end of the file");
	/* array of strings whose third string runs off the end */
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, GGUF_VT_ARRAY);
	u32(&b, GGUF_VT_STRING);
	u64(&b, 3);
	str(&b, "a");
	str(&b, "b");
	u64(&b, 50);
	put(&b, "0123456789012345678901234567890123456789", 40);
	REFUSED(&b, "string 2 of the array runs past the end");
	/* a tensor name past the end */
	header(&b, 3, 1, 0);
	u64(&b, 1ull << 40);
	put(&b, "0123456789012345678901234567890123456789", 40);
	REFUSED(&b, "name runs past the end");
	free(b.p);
}

static void test_arrays(void)
{
	struct img b = { 0 };
	uint64_t counts[3] = { 1ull << 62, UINT64_MAX / 4 + 1, 11 };
	int i;

	/* n * 4 overflows or exceeds the file */
	for (i = 0; i < 3; i++) {
		header(&b, 3, 0, 1);
		str(&b, "arr");
		u32(&b, GGUF_VT_ARRAY);
		u32(&b, GGUF_VT_U32);
		u64(&b, counts[i]);
		put(&b, "0123456789012345678901234567890123456789", 40);
		REFUSED(&b, "runs past the end of the file");
	}
	header(&b, 3, 0, 1);
	str(&b, "arr");
	u32(&b, GGUF_VT_ARRAY);
	u32(&b, GGUF_VT_ARRAY);
	u64(&b, 0);
	put(&b, "0123456789012345678901234567890123456789", 40);
	REFUSED(&b, "array of arrays");
	header(&b, 3, 0, 1);
	str(&b, "b");
	u32(&b, GGUF_VT_BOOL);
	put(&b, "\x02", 1);
	REFUSED(&b, "bool value 2");
	header(&b, 3, 0, 1);
	str(&b, "t");
	u32(&b, 13);
	u32(&b, 0);
	REFUSED(&b, "unknown value type 13");
	header(&b, 3, 0, 2);
	kv_u32(&b, "same", 1);
	kv_u32(&b, "same", 2);
	REFUSED(&b, "'same' appears twice");
	free(b.p);
}

static void test_alignment_key(void)
{
	struct img b = { 0 };

	header(&b, 3, 0, 1);
	kv_u32(&b, "general.alignment", 48);
	REFUSED(&b, "not a power of two");
	header(&b, 3, 0, 1);
	kv_u32(&b, "general.alignment", 0);
	REFUSED(&b, "not a power of two");
	header(&b, 3, 0, 1);
	str(&b, "general.alignment");
	u32(&b, GGUF_VT_U64);
	u64(&b, 64);
	REFUSED(&b, "not u32");
	free(b.p);
}

/* One tensor info with the given fields, followed by @data bytes of data. */
static void one_tensor(struct img *b, uint32_t nd, const uint64_t *ne, uint32_t type,
		       uint64_t off, size_t data)
{
	header(b, 3, 1, 0);
	tinfo(b, "t", nd, ne, type, off);
	pad(b, 32);
	while (data--)
		put(b, "\0", 1);
}

static void test_tensor_infos(void)
{
	static const uint64_t ok[5] = { 32, 2, 1, 1, 1 }, zero[2] = { 32, 0 };
	static const uint64_t big[3] = { 1ull << 32, 1ull << 32, 2 };
	static const uint64_t odd[2] = { 33, 1 };
	struct img b = { 0 };
	char err[256];
	struct gguf_file *f;

	one_tensor(&b, 2, ok, GGUF_TT_F32, 0, 256);
	f = parse(&b, err, sizeof(err));
	CB_CHECK(f && f->tensors[0].nbytes == 256, "plain tensor refused: %s", err);
	gguf_close(f);
	one_tensor(&b, 2, ok, GGUF_TT_F32, 0, 255);
	REFUSED(&b, "lies outside the file");
	one_tensor(&b, 2, ok, GGUF_TT_F32, 32, 256);
	REFUSED(&b, "lies outside the file");
	one_tensor(&b, 2, ok, GGUF_TT_F32, UINT64_MAX - 31, 256);
	REFUSED(&b, "lies outside the file");
	one_tensor(&b, 2, ok, GGUF_TT_F32, 4, 512);
	REFUSED(&b, "not a multiple of the alignment");
	one_tensor(&b, 0, ok, GGUF_TT_F32, 0, 256);
	REFUSED(&b, "0 dimensions");
	one_tensor(&b, 5, ok, GGUF_TT_F32, 0, 256);
	REFUSED(&b, "5 dimensions");
	one_tensor(&b, 2, zero, GGUF_TT_F32, 0, 256);
	REFUSED(&b, "bad shape");
	one_tensor(&b, 3, big, GGUF_TT_F32, 0, 256);
	REFUSED(&b, "bad shape");
	one_tensor(&b, 2, odd, GGUF_TT_Q8_0, 0, 256);
	REFUSED(&b, "not a whole number of Q8_0 blocks");
	one_tensor(&b, 2, ok, 99, 0, 256);
	REFUSED(&b, "unknown ggml type 99");
	/* F32 of 2^62 elements: the byte count overflows 64 bits */
	{
		static const uint64_t huge[2] = { 1ull << 31, 1ull << 31 };

		one_tensor(&b, 2, huge, GGUF_TT_F32, 0, 256);
		REFUSED(&b, "size overflows");
	}
	/* two tensors: same name; overlapping data */
	header(&b, 3, 2, 0);
	tinfo(&b, "t", 2, ok, GGUF_TT_F32, 0);
	tinfo(&b, "t", 2, ok, GGUF_TT_F32, 256);
	pad(&b, 32);
	while (b.n % 32 || b.n < 1024)
		put(&b, "\0", 1);
	REFUSED(&b, "'t' appears twice");
	header(&b, 3, 2, 0);
	tinfo(&b, "a", 2, ok, GGUF_TT_F32, 0);
	tinfo(&b, "b", 2, ok, GGUF_TT_F32, 224);
	pad(&b, 32);
	while (b.n < 1024)
		put(&b, "\0", 1);
	REFUSED(&b, "overlap");
	free(b.p);
}

static void test_getters(void)
{
	struct img b = { 0 };
	char err[256];
	struct gguf_file *f;
	uint64_t u;
	int v;

	header(&b, 3, 0, 4);
	str(&b, "neg");
	u32(&b, GGUF_VT_I32);
	u32(&b, (uint32_t)-5);
	str(&b, "big");
	u32(&b, GGUF_VT_U64);
	u64(&b, UINT64_MAX);
	str(&b, "flag");
	u32(&b, GGUF_VT_BOOL);
	put(&b, "\x01", 1);
	str(&b, "i8");
	u32(&b, GGUF_VT_I8);
	put(&b, "\x05", 1);
	f = parse(&b, err, sizeof(err));
	CB_CHECK(f, "refused: %s", err);
	if (f) {
		CB_CHECK(gguf_get_uint(f, "neg", &u) == -2, "negative as unsigned");
		CB_CHECK(gguf_get_uint(f, "big", &u) == -2, "u64 above INT64_MAX");
		CB_CHECK(!gguf_get_bool(f, "flag", &v) && v == 1, "bool");
		CB_CHECK(gguf_get_uint(f, "flag", &u) == -2, "bool as integer");
		CB_CHECK(!gguf_get_uint(f, "i8", &u) && u == 5, "i8");
		gguf_close(f);
	}
	CB_CHECK(gguf_type_bytes(GGUF_TT_Q8_0, 64) == 68 && !gguf_type_bytes(GGUF_TT_Q8_0, 33) &&
		 !gguf_type_bytes(GGUF_TT_F32, UINT64_MAX / 2) && !gguf_type_bytes(1000, 32),
		 "gguf_type_bytes");
	CB_CHECK(!strcmp(gguf_type_name(GGUF_TT_Q4_K), "Q4_K") &&
		 !strcmp(gguf_type_name(200), "type 200"), "gguf_type_name");
	free(b.p);
}

/* Every strict prefix of a file with tensors is refused, never read past. */
static void test_every_prefix_refused(void)
{
	struct img b = { 0 };
	size_t n, bad = 0;
	char err[256];

	valid(&b, 3, 32);
	for (n = 0; n < b.n; n++) {
		/* a fresh exact-size copy so that ASan/valgrind see overruns */
		uint8_t *c = malloc(n ? n : 1);
		struct gguf_file *f;

		memcpy(c, b.p, n);
		f = gguf_parse("mem.gguf", c, n, err, sizeof(err));
		if (f || !strstr(err, "mem.gguf: "))
			bad++;
		gguf_close(f);
		free(c);
	}
	CB_CHECK(!bad, "%zu of %zu prefixes accepted or refused without a message", bad, b.n);
	free(b.p);
}

/* Random byte corruption: whatever is accepted must be self-consistent. */
static void test_random_corruption(void)
{
	struct img b = { 0 };
	uint64_t s = 0x9e3779b97f4a7c15ull;
	int i, k, accepted = 0, incons = 0;
	char err[256];

	valid(&b, 3, 32);
	for (i = 0; i < 20000; i++) {
		uint8_t *c = malloc(b.n);
		struct gguf_file *f;
		uint64_t t;

		memcpy(c, b.p, b.n);
		for (k = 0; k < 1 + i % 4; k++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			c[s % b.n] = (uint8_t)(s >> 32);
		}
		f = gguf_parse("mem.gguf", c, b.n, err, sizeof(err));
		if (f) {
			accepted++;
			for (t = 0; t < f->n_tensors; t++) {
				const struct gguf_tensor *x = &f->tensors[t];
				const uint8_t *d = x->data;

				if (d < c || d + x->nbytes > c + b.n)
					incons++;
			}
			for (t = 0; t < f->n_kv; t++)
				if (f->kv[t].val < c || f->kv[t].val + f->kv[t].val_size > c + b.n)
					incons++;
			free(gguf_str_array(gguf_find_kv(f, "tok.list")));
		}
		gguf_close(f);
		free(c);
	}
	printf("# %d of 20000 corrupted images accepted\n", accepted);
	CB_CHECK(!incons, "%d accepted images point outside the buffer", incons);
	free(b.p);
}

/*
 * The ggml types read as they are: found by name and block in the engine's
 * type table.  Exactly these, each to its engine type, and none other of
 * the 40 ggml numbers (IQ1/IQ2/IQ3, TQ, integers, f64, Q8_1, Q8_K).
 */
/*
 * GLM's tokenizer.ggml.pre ("glm4", and GLM-4's "chatglm-bpe"): llama.cpp
 * splits them with Llama 3's regex and, unlike Llama 3's, a BPE that does
 * not look whole pieces up first (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_CHATGLM4).
 */
static void test_glm_pre_tokenizers(void)
{
	const struct gguf_pretok *l3 = gguf_pretok_find("llama-bpe", 9);
	static const char *const glm[2] = { "glm4", "chatglm-bpe" };
	int i;

	CB_CHECK(l3 && l3->ignore_merges, "llama-bpe");
	for (i = 0; i < 2 && l3; i++) {
		const struct gguf_pretok *g = gguf_pretok_find(glm[i], strlen(glm[i]));

		CB_CHECK(g && !strcmp(g->regex[0], l3->regex[0]) && !g->regex[1] && !g->nfc &&
			 !g->ignore_merges, "%s: not Llama 3's split, no ignore_merges", glm[i]);
	}
}

/* The pieces @re (PCRE2, as the tokenizer compiles it) splits @s into. */
static int pieces(const char *re, const char *s)
{
	uint32_t opts = PCRE2_UTF | PCRE2_UCP;
	PCRE2_SIZE eo, off = 0, n = strlen(s);
	pcre2_match_data *md;
	pcre2_code *c;
	int ec, k = 0;

	c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
	if (!c)
		return -1;
	md = pcre2_match_data_create_from_pattern(c, NULL);
	while (off < n && pcre2_match(c, (PCRE2_SPTR)s, n, off, 0, md, NULL) > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

		off = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
		k++;
	}
	pcre2_match_data_free(md);
	pcre2_code_free(c);
	return k;
}

/*
 * Qwen3.5's split keeps a word's combining marks (a Devanagari virama and
 * vowel sign, \p{M} that NFC leaves alone) in its letter run, where
 * Qwen2's cuts the word at each of them.
 */
static void test_qwen35_pre_tokenizer(void)
{
	const struct gguf_pretok *q35 = gguf_pretok_find("qwen35", 6);
	const struct gguf_pretok *q2 = gguf_pretok_find("qwen2", 5);
	static const char word[] = " \xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d"
				   "\xe0\xa4\xa4\xe0\xa5\x87";	/* " namaste" */
	int a, b;

	CB_CHECK(q35 && q2 && q35->nfc && !q35->ignore_merges && !q35->regex[1], "qwen35");
	if (!q35 || !q2)
		return;
	a = pieces(q35->regex[0], word);
	b = pieces(q2->regex[0], word);
	CB_CHECK(a == 1 && b == 3, "' namaste': %d pieces by qwen35, %d by qwen2 (want 1, 3)", a,
		 b);
	a = pieces(q35->regex[0], "Hello, world's 123");
	b = pieces(q2->regex[0], "Hello, world's 123");
	CB_CHECK(a == b && a == 8, "plain text: %d and %d pieces (want 8)", a, b);
}

static void test_type_mapping(void)
{
	static const struct { uint32_t ggml; int cb; } want[] = {
		{ GGUF_TT_F32, CB_DT_F32 }, { GGUF_TT_F16, CB_DT_F16 },
		{ GGUF_TT_BF16, CB_DT_BF16 }, { GGUF_TT_Q8_0, CB_DT_Q8_0 },
		{ GGUF_TT_Q4_0, CB_DT_Q4_0 }, { GGUF_TT_Q4_1, CB_DT_Q4_1 },
		{ GGUF_TT_Q5_0, CB_DT_Q5_0 }, { GGUF_TT_Q5_1, CB_DT_Q5_1 },
		{ GGUF_TT_IQ4_NL, CB_DT_IQ4_NL }, { GGUF_TT_Q2_K, CB_DT_Q2_K },
		{ GGUF_TT_Q3_K, CB_DT_Q3_K }, { GGUF_TT_Q4_K, CB_DT_Q4_K },
		{ GGUF_TT_Q5_K, CB_DT_Q5_K }, { GGUF_TT_Q6_K, CB_DT_Q6_K },
		{ GGUF_TT_IQ4_XS, CB_DT_IQ4_XS }, { GGUF_TT_MXFP4, CB_DT_MXFP4 },
	};
	uint32_t t, i, found = 0;
	char list[256];

	for (t = 0; t < 64; t++) {
		int expect = -1;

		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (want[i].ggml == t)
				expect = want[i].cb;
		CB_CHECK(gguf_type_to_cb(t) == expect, "ggml type %u (%s): %d, want %d", t,
			 gguf_type_name(t), gguf_type_to_cb(t), expect);
		found += expect >= 0;
	}
	CB_CHECK(found == CB_DT__COUNT, "%u of the engine's %d types read from GGUF", found,
		 CB_DT__COUNT);
	CB_CHECK(!strcmp(gguf_supported_types(list, sizeof(list)),
			 "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, "
			 "Q5_K, Q6_K, IQ4_XS, MXFP4"), "supported: %s", list);
	/* a buffer too small is cut, never overrun */
	CB_CHECK(strlen(gguf_supported_types(list, 8)) == 7, "cut to %zu", strlen(list));
}

int main(void)
{
	CB_RUN(test_valid_v3_and_v2);
	CB_RUN(test_custom_alignment);
	CB_RUN(test_bad_header);
	CB_RUN(test_lying_counts);
	CB_RUN(test_strings_past_eof);
	CB_RUN(test_arrays);
	CB_RUN(test_alignment_key);
	CB_RUN(test_tensor_infos);
	CB_RUN(test_getters);
	CB_RUN(test_every_prefix_refused);
	CB_RUN(test_random_corruption);
	CB_RUN(test_type_mapping);
	CB_RUN(test_glm_pre_tokenizers);
	CB_RUN(test_qwen35_pre_tokenizer);
	return cb_test_done();
}
