#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Write a tiny GPT-2-style byte-level BPE tokenizer.json (and the two
config files) into a model directory, so that `colibri convert` has a
tokenizer to store.  256 byte tokens, a few merges, <|endoftext|> = eos.

usage: make_tokenizer.py OUTDIR [--vocab N]
"""
import argparse
import json
import os


def byte_chars():
    # GPT-2's printable mapping of the 256 bytes
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=300)
    a = ap.parse_args()
    bc = byte_chars()
    vocab = {bc[b]: b for b in range(256)}
    merges = []
    for x, y in [("t", "h"), ("th", "e"), ("a", "n"), ("an", "d"), ("Ġ", "the"), ("i", "n")]:
        if x + y not in vocab and len(vocab) < a.vocab - 2:
            vocab[x + y] = len(vocab)
            merges.append(x + " " + y)
    eos = len(vocab)
    tok = {
        "version": "1.0",
        "added_tokens": [{"id": eos, "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": merges},
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(a.out, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
                   "add_bos_token": False}, f)
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos}, f)


if __name__ == "__main__":
    main()
