// SPDX-License-Identifier: MIT OR GPL-2.0
// tests/gguf/peer.mjs FILE... - read GGUF files with an independent parser
// (the npm package @huggingface/gguf) and print, per file, one line per
// tensor "tensor NAME TYPE NE0,NE1,... OFFSET" and one per metadata key
// "kv KEY", so tests/gguf/run can compare them with colibri's parser.
import { gguf } from '@huggingface/gguf';

for (const file of process.argv.slice(2)) {
  const { metadata, tensorInfos } = await gguf(file, { allowLocalFile: true });
  console.log(`file ${file} version ${metadata.version}`);
  for (const k of Object.keys(metadata)) {
    if (k !== 'version' && k !== 'tensor_count' && k !== 'kv_count') console.log(`kv ${k}`);
  }
  for (const t of tensorInfos) {
    console.log(`tensor ${t.name} ${t.dtype} ${t.shape.map(String).join(',')} ${String(t.offset)}`);
  }
}
