// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_pretok.c - the table of tokenizer.ggml.pre values: for each, the
 * split regexes (in the syntax of tokenizer.json: Oniguruma, which
 * tok_pretokenize.c rewrites for PCRE2), the normalizer and whether the BPE
 * ignores merges.  The lists follow how llama.cpp splits each name
 * (llama-vocab.cpp) and the tokenizer.json of the models it is written for.
 */
#include <stdio.h>
#include <string.h>

#include "import/gguf_pretok.h"

/* Llama 3's (GPT-4's cl100k): llama-bpe, and GLM's glm4 and chatglm-bpe. */
#define LLAMA3_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| " \
	"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* Kimi-K2's letters: upper/titlecase (and other letters, marks), then lower, never Han. */
#define KIMI_UP "(?:(?!\\p{sc:Han})[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}])"
#define KIMI_LOW "(?:(?!\\p{sc:Han})[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}])"
#define CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"

/* GPT-2's pattern: gpt-2, olmo and files without tokenizer.ggml.pre. */
#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/*
 * DeepSeek-LLM: letters of the cased scripts (Lu, Ll, Lt as the tokenizer
 * lists them, an optional whitespace before), ASCII and full-width
 * punctuation, trailing whitespace, CJK ideographs and Hangul, runs of
 * digits; newlines first, each alone.
 */
#define DS_LLM_LETTERS \
	"A-Za-z\\x{b5}\\x{c0}-\\x{d6}\\x{d8}-\\x{f6}\\x{f8}-\\x{1ba}\\x{1bc}-\\x{1bf}" \
	"\\x{1c4}-\\x{293}\\x{295}-\\x{2af}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37b}-\\x{37d}" \
	"\\x{37f}\\x{386}\\x{388}-\\x{38a}\\x{38c}\\x{38e}-\\x{3a1}\\x{3a3}-\\x{3f5}" \
	"\\x{3f7}-\\x{481}\\x{48a}-\\x{52f}\\x{531}-\\x{556}\\x{10a0}-\\x{10c5}" \
	"\\x{13a0}-\\x{13f5}\\x{13f8}-\\x{13fd}\\x{1c90}-\\x{1cba}\\x{1cbd}-\\x{1cbf}" \
	"\\x{1d00}-\\x{1d2b}\\x{1d6b}-\\x{1d77}\\x{1d79}-\\x{1d9a}\\x{1e00}-\\x{1f15}" \
	"\\x{1f18}-\\x{1f1d}\\x{1f20}-\\x{1f45}\\x{1f48}-\\x{1f4d}\\x{1f50}-\\x{1f57}" \
	"\\x{1f59}\\x{1f5b}\\x{1f5d}\\x{1f5f}-\\x{1f7d}\\x{1f80}-\\x{1fb4}\\x{1fb6}-\\x{1fbc}" \
	"\\x{1fbe}\\x{1fc2}-\\x{1fc4}\\x{1fc6}-\\x{1fcc}\\x{1fd0}-\\x{1fd3}\\x{1fd6}-\\x{1fdb}" \
	"\\x{1fe0}-\\x{1fec}\\x{1ff2}-\\x{1ff4}\\x{1ff6}-\\x{1ffc}\\x{2102}\\x{2107}" \
	"\\x{210a}-\\x{2113}\\x{2115}\\x{2119}-\\x{211d}\\x{2124}\\x{2126}\\x{2128}" \
	"\\x{212a}-\\x{212d}\\x{212f}-\\x{2134}\\x{2139}\\x{213c}-\\x{213f}\\x{2145}-\\x{2149}" \
	"\\x{214e}\\x{2183}\\x{2184}\\x{2c00}-\\x{2c7b}\\x{2c7e}-\\x{2ce4}\\x{2ceb}-\\x{2cee}" \
	"\\x{2cf2}\\x{2cf3}\\x{a640}-\\x{a66d}\\x{a680}-\\x{a69b}\\x{a722}-\\x{a76f}" \
	"\\x{a771}-\\x{a787}\\x{a78b}-\\x{a78e}\\x{ab70}-\\x{abbf}\\x{fb00}-\\x{fb06}" \
	"\\x{fb13}-\\x{fb17}\\x{ff21}-\\x{ff3a}\\x{ff41}-\\x{ff5a}\\x{10400}-\\x{1044f}" \
	"\\x{104b0}-\\x{104d3}\\x{104d8}-\\x{104fb}\\x{10c80}-\\x{10cb2}\\x{10cc0}-\\x{10cf2}" \
	"\\x{118a0}-\\x{118df}\\x{1e900}-\\x{1e943}"
/* CJK unified ideographs U+4E00..U+9FA5, U+0800..U+4E00, Hangul U+AC00..U+D7FF */
#define DS_CJK_HANGUL "[\\x{4e00}-\\x{9fa5}\\x{800}-\\x{4e00}\\x{ac00}-\\x{d7ff}]+"

static const struct gguf_pretok pretoks[] = {
	{ "qwen2",
	  { "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
	    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 1, 0 },
	/*
	 * Qwen3.5/3.6 (llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN35): Qwen2's split
	 * with the combining marks (\p{M}) in the letter runs, not the
	 * punctuation's
	 */
	{ "qwen35",
	  { "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}|"
	    " ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 1, 0 },
	{ "llama-bpe", { LLAMA3_RE }, 0, 1 },
	/* GLM-4.5/4.6 (and GLM-4): llama.cpp splits as Llama 3, without ignore_merges */
	{ "glm4", { LLAMA3_RE }, 0, 0 },
	{ "chatglm-bpe", { LLAMA3_RE }, 0, 0 },
	{ "gpt-2", { GPT2_RE }, 0, 0 },
	{ "default", { GPT2_RE }, 0, 0 },
	{ "olmo", { GPT2_RE }, 0, 0 },
	/*
	 * o200k (GPT-4o, GPT-OSS: llama.cpp writes gpt-4o for both): words
	 * split at case changes, contractions kept on the word, digits in
	 * threes, '/' and newlines after punctuation.  The BPE ignores merges,
	 * as tiktoken looks whole pieces up first.
	 */
	{ "gpt-4o",
	  { "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
	    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
	    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
	    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
	    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}|"
	    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 0, 1 },
	{ "deepseek-llm",
	  { "[\\r\\n]", "\\s?[" DS_LLM_LETTERS "]+",
	    "\\s?[!-/:-~\\x{ff01}-\\x{ff0f}\\x{ff1a}-\\x{ff5e}\\x{2018}-\\x{201f}"
	    "\\x{3000}-\\x{3002}]+",
	    "\\s+$", DS_CJK_HANGUL, "\\p{N}+" }, 0, 0 },
	/* DeepSeek-Coder: letters, punctuation, CJK/Hangul, every digit alone */
	{ "deepseek-coder",
	  { "[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", DS_CJK_HANGUL, "\\p{N}" }, 0, 0 },
	/*
	 * DeepSeek-V3: digits in threes, runs of CJK ideographs and kana, then
	 * ASCII punctuation glued to the ASCII word after it, letters with
	 * their marks, punctuation/symbol runs, whitespace as GPT-4's.
	 */
	/*
	 * Kimi-K2 (tokenization_kimi.py's pat_str): CJK ideographs in runs of
	 * their own, words split at case changes from every other letter and
	 * mark ("[...&&[^\p{Han}]]", class intersection, written with a
	 * lookahead for PCRE2), digits in threes.  Han is the Script property,
	 * as Python's regex (tests/tokenizer's reference) and Oniguruma read
	 * \p{Han}: PCRE2's bare \p{Han} takes Script_Extensions, U+3002 '。'
	 * among them, hence sc:.  tiktoken looks whole pieces up first.
	 * hf_tiktoken.c splits a tiktoken.model with this entry.
	 */
	{ "kimi-k2",
	  { "[\\p{sc:Han}]+|[^\\r\\n\\p{L}\\p{N}]?" KIMI_UP "*" KIMI_LOW "+" CONTRACTIONS "?|"
	    "[^\\r\\n\\p{L}\\p{N}]?" KIMI_UP "+" KIMI_LOW "*" CONTRACTIONS "?|\\p{N}{1,3}|"
	    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 0, 1 },
	{ "deepseek-v3",
	  { "\\p{N}{1,3}", "[\\x{4e00}-\\x{9fa5}\\x{3040}-\\x{309f}\\x{30a0}-\\x{30ff}]+",
	    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?"
	    "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 0, 0 },
};

const struct gguf_pretok *gguf_pretok_find(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(pretoks) / sizeof(pretoks[0]); i++)
		if (strlen(pretoks[i].pre) == n && !memcmp(pretoks[i].pre, name, n))
			return &pretoks[i];
	return NULL;
}

void gguf_pretok_names(char *buf, size_t len)
{
	size_t i, o = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (i = 0; i < sizeof(pretoks) / sizeof(pretoks[0]) && o < len; i++) {
		int k = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", pretoks[i].pre);

		if (k < 0)
			break;
		o += (size_t)k;
	}
}
