#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""A tiktoken tokenizer directory (Kimi-K2's layout: tiktoken.model,
tokenizer_config.json naming TikTokenTokenizer) through colibri, against
tiktoken's algorithm written here from its description, with the split
regex verbatim from tokenization_kimi.py run by Python's `regex` module
(which has the class intersection `&&` that colibri rewrites as a
lookahead for PCRE2).

The vocabulary is o200k's (GPT-OSS's tokenizer.json, an npm dev
dependency): its byte-level tokens turned back into bytes, ranked by id,
with Kimi's split and its 256 special ids after the ranks.  tiktoken:
split the text at the added tokens, split each stretch with the regex,
look a piece up whole, else merge its bytes by the lowest rank of an
adjacent pair's concatenation (the leftmost of equals).

usage: tiktoken_check.py COLIBRI TOKENIZER.JSON CORPUS.JSONL OUTDIR
Prints TAP.
"""
import json
import os
import subprocess
import sys

try:
    import regex
except ImportError:
    regex = None

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gguf"))
from write_gguf import bytelevel_chars  # noqa: E402

KIMI_PAT = "|".join([
    r"""[\p{Han}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
RESERVED = 256


def byte_decoder():
    """GPT-2's bytes_to_unicode (tests/gguf/write_gguf.py's), inverted: code point -> byte."""
    return {c: b for b, c in bytelevel_chars().items()}


def write_dir(tok_json, out):
    """tiktoken.model and tokenizer_config.json from o200k's vocabulary."""
    with open(tok_json, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    dec = byte_decoder()
    ranks = {}
    for s, i in vocab.items():
        ranks[bytes(dec[c] for c in s)] = i
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise SystemExit("the vocabulary's ids are not dense")
    os.makedirs(out, exist_ok=True)
    import base64
    with open(os.path.join(out, "tiktoken.model"), "w") as f:
        for b, i in sorted(ranks.items(), key=lambda x: x[1]):
            f.write("%s %d\n" % (base64.b64encode(b).decode(), i))
    n = len(ranks)
    specials = {n: "[BOS]", n + 1: "[EOS]", n + 2: "<|im_end|>", n + 3: "<|im_user|>"}
    cfg = {"tokenizer_class": "TikTokenTokenizer", "bos_token": "[BOS]", "eos_token": "[EOS]",
           "added_tokens_decoder": {str(k): {"content": v, "special": True}
                                    for k, v in specials.items()}}
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f)
    added = {("<|reserved_token_%d|>" % i): i for i in range(n, n + RESERVED)}
    for k, v in specials.items():
        del added["<|reserved_token_%d|>" % k]
        added[v] = k
    return ranks, added


def bpe(ranks, piece):
    """tiktoken's merge: the adjacent pair whose concatenation has the lowest
    rank, the leftmost of equals (a heap of pairs keyed by rank and the
    left part's start, stale entries skipped)."""
    import heapq
    if piece in ranks:
        return [ranks[piece]]
    n = len(piece)
    end = list(range(1, n + 1))          # part starting at i ends at end[i]
    prev = list(range(-1, n - 1))
    alive = [True] * n
    heap = []

    def push(i):
        j = end[i]
        if j < n:
            r = ranks.get(piece[i:end[j]])
            if r is not None:
                heapq.heappush(heap, (r, i, end[j]))

    for i in range(n - 1):
        push(i)
    while heap:
        r, i, stop = heapq.heappop(heap)
        if not alive[i] or end[i] >= n or end[end[i]] != stop:
            continue
        j = end[i]
        alive[j] = False
        end[i] = stop
        if stop < n:
            prev[stop] = i
        push(i)
        if prev[i] >= 0:
            push(prev[i])
    out, i = [], 0
    while i < n:
        out.append(ranks[piece[i:end[i]]])
        i = end[i]
    return out


def encode(ranks, added, alt, pat, text):
    """@alt: the added tokens' alternation, longest first."""
    ids, i = [], 0
    for m in alt.finditer(text):
        ids += encode_plain(ranks, pat, text[i:m.start()])
        ids.append(added[m.group(0)])
        i = m.end()
    return ids + encode_plain(ranks, pat, text[i:])


def encode_plain(ranks, pat, text):
    out = []
    for m in pat.finditer(text):
        out += bpe(ranks, m.group(0).encode("utf-8"))
    return out


def main():
    colibri, tok_json, corpus_path, out = sys.argv[1:5]
    n = failed = 0

    def tap(ok, name, *notes):
        nonlocal n, failed
        n += 1
        failed += not ok
        for x in notes:
            print("# " + x)
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name), flush=True)

    if regex is None:
        print("ok 1 - tiktoken (Kimi-K2) tokenizer against tiktoken's algorithm # SKIP "
              "python3-regex is not installed")
        print("1..1")
        return 0
    ranks, added = write_dir(tok_json, out)
    pat = regex.compile(KIMI_PAT, regex.V1)
    alt = regex.compile("|".join(regex.escape(a) for a in sorted(added, key=len, reverse=True)))
    with open(corpus_path, encoding="utf-8") as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    r = subprocess.run([colibri, "tokenize", "--model", out, "--jsonl", "-"],
                       input="".join(json.dumps(s) + "\n" for s in corpus).encode(),
                       capture_output=True)
    lines = [json.loads(x) for x in r.stdout.decode().split("\n") if x.strip()]
    if r.returncode or len(lines) != len(corpus):
        tap(False, "colibri tokenizes the tiktoken directory",
            "exit %d, %d of %d lines: %s" % (r.returncode, len(lines), len(corpus),
                                            r.stderr.decode()[-500:]))
        print("1..%d" % n)
        return 1
    bad, dec_bad = [], []
    for s, got in zip(corpus, lines):
        want = encode(ranks, added, alt, pat, s)
        if got["ids_special"] != want:
            bad.append((s, got["ids_special"], want))
        if bytes.fromhex(got["dec"]) != s.encode("utf-8"):
            dec_bad.append(s)
    tap(not bad, "tiktoken (Kimi-K2 split, o200k ranks): ids equal tiktoken's algorithm's "
        "(%d/%d equal)" % (len(corpus) - len(bad), len(corpus)),
        *["%r: colibri %s, want %s" % (s[:60], g[:12], w[:12]) for s, g, w in bad[:5]])
    tap(not dec_bad, "tiktoken (Kimi-K2 split): decode(encode(s)) == s (%d/%d)"
        % (len(corpus) - len(dec_bad), len(corpus)), *[repr(s[:60]) for s in dec_bad[:5]])
    han = [s for s in corpus if regex.search(r"\p{Han}", s)]
    tap(len(han) >= 5, "the corpus has text with CJK ideographs (%d strings) for the Han split"
        % len(han))
    # the special tokens: named in tokenizer_config.json, or reserved
    got = subprocess.run([colibri, "tokenize", "--model", out, "--jsonl", "-"],
                         input=(json.dumps("[BOS]x<|reserved_token_%d|>" % (len(ranks) + 9)) +
                                "\n").encode(), capture_output=True).stdout.decode()
    ids = json.loads(got.split("\n")[0])["ids_special"] if got.strip() else []
    tap(ids[:1] == [len(ranks)] and ids[-1:] == [len(ranks) + 9],
        "the special ids after the ranks: tokenizer_config.json's names, the rest reserved",
        "got %s" % ids)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
