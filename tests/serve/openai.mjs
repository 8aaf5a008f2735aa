// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/openai.mjs - the official `openai` npm client against a
// running `colibri serve`: models list, chat completions streamed and not,
// text completions streamed and not, stop strings across token boundaries,
// the sampling parameters, four concurrent clients that get what each gets
// alone, a client that aborts a stream, wrong keys and unknown models.
//
// What the server must answer is worked out without the server: the
// conversation is rendered with `colibri chat-template`, tokenized with
// `colibri tokenize` (with the tokenizer's special tokens for a model
// without a template, the fallback format), continued greedily with
// `colibri logits --greedy` in-process, cut at the end-of-sequence or
// end-of-turn token, and decoded with `colibri tokenize --decode`.
//
// Usage: node openai.mjs --base URL --key KEY --colibri PATH --model-file F
//                        --name NAME [--tmp DIR]
// Prints TAP; exits non-zero if a test failed.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import OpenAI from "openai";
import { args, done, show as showJson, tap } from "./tap.mjs";

const { base, key, colibri, name } = args;
const modelFile = args["model-file"];
const tmp = args.tmp || fs.mkdtempSync("/tmp/serve-openai-");

const show = (s) => showJson(s, 400);
const same = (got, want) => (got === want ? undefined : `got  ${show(got)}\nwant ${show(want)}`);

const client = (k = key) => new OpenAI({ baseURL: base, apiKey: k, maxRetries: 0, timeout: 600000 });

// --- what the answers must be ------------------------------------------------

const run = (argv, input) => execFileSync(colibri, argv, { input, maxBuffer: 64 << 20 }).toString("utf8");
const info = run(["info", modelFile]);
const eos = Number((/ eos (-?\d+)/.exec(info) || [0, -1])[1]);

// The tokens of some text (with the tokenizer's special tokens or not).
const tokens = (text, special) => {
	const f = path.join(tmp, "text");
	fs.writeFileSync(f, text);
	const out = run(["tokenize", "--model", modelFile, "--text", "-", ...(special ? ["--add-special"] : [])],
		fs.readFileSync(f));
	return out.trim() ? out.trim().split(/\s+/).map(Number) : [];
};
const decode = (ids) => {
	if (!ids.length) return "";
	const out = run(["tokenize", "--model", modelFile, "--decode", "--skip-special", "--text", ids.join(" ")]);
	return out.endsWith("\n") ? out.slice(0, -1) : out;
};

// The end-of-turn token the template prints after an assistant message, if special.
const rendered = (messages, agp) => {
	const f = path.join(tmp, "messages.json");
	fs.writeFileSync(f, JSON.stringify(messages));
	return run(["chat-template", "--model", modelFile, "--messages", f, ...(agp ? ["--add-generation-prompt"] : [])]);
};
const templated = !/^USER:\n/.test(rendered([{ role: "user", content: "x" }], false));
let eot = -1;
if (templated) {
	const r = rendered([{ role: "user", content: "Hi" }, { role: "assistant", content: "MARK" }], false);
	const after = r.slice(r.indexOf("MARK") + 4);
	const t = tokens(after, false);
	if (t.length && t[0] !== eos && decode([t[0]]) === "") eot = t[0];
}

// A greedy continuation of @ids, cut at EOS (and, for chat, the end of turn).
function expect(ids, max, chat) {
	const gen = run(["logits", "--backend", "user", "--model", modelFile, "--tokens", ids.join(" "),
		"--greedy", String(max)]).trim().split(/\s+/).map(Number);
	let cut = gen.findIndex((t) => t === eos || (chat && t === eot));
	const finish = cut >= 0 ? "stop" : "length";
	if (cut < 0) cut = gen.length;
	return { text: decode(gen.slice(0, cut)), completion_tokens: finish === "stop" ? cut + 1 : cut,
		prompt_tokens: ids.length, finish };
}
const chatExpect = (messages, max) => expect(tokens(rendered(messages, true), !templated), max, true);
const complExpect = (prompt, max) => expect(tokens(prompt, true), max, false);

const M1 = [{ role: "system", content: "You speak like a player." }, { role: "user", content: "Who art thou?" }];
const P1 = templated ? "Hello there" : "ROMEO:";
const want1 = chatExpect(M1, 24);
const wantP = complExpect(P1, 20);

// --- the tests ------------------------------------------------------------------

async function collect(stream) {
	const chunks = [];
	for await (const c of stream) chunks.push(c);
	return chunks;
}

async function main() {
	const c = client();
	try {
		const list = await c.models.list();
		tap(list.data.length === 1 && list.data[0].id === name && list.data[0].object === "model",
			"models.list() has the served model", show(list.data));
		const one = await c.models.retrieve(name);
		tap(one.id === name, "models.retrieve() of it", show(one));
	} catch (e) {
		tap(false, "models", e.stack);
	}

	const r = await c.chat.completions.create({ model: name, messages: M1, max_tokens: 24, temperature: 0 });
	const ch = r.choices[0];
	tap(ch.message.content === want1.text, "chat completion: the greedy answer of the template's prompt",
		same(ch.message.content, want1.text));
	tap(ch.message.role === "assistant" && ch.finish_reason === want1.finish && r.object === "chat.completion",
		`chat completion: role, finish_reason ${want1.finish}`, show(r));
	tap(r.usage.prompt_tokens === want1.prompt_tokens && r.usage.completion_tokens === want1.completion_tokens &&
		r.usage.total_tokens === want1.prompt_tokens + want1.completion_tokens,
	"chat completion: usage", `${show(r.usage)} want ${show(want1)}`);

	// The sampling parameters reach the sampler: at a high temperature the
	// answer is another (the seed fixes which), top_k 1 and a top_p of 1 ppm
	// (the likeliest token alone) bring the greedy one back.
	const hot = { model: name, messages: M1, max_tokens: 24, temperature: 1.5, seed: 1 };
	const sampled = (await c.chat.completions.create(hot)).choices[0].message.content;
	const topk = (await c.chat.completions.create({ ...hot, top_k: 1 })).choices[0].message.content;
	const topp = (await c.chat.completions.create({ ...hot, top_p: 0.000001 })).choices[0].message.content;
	const again = (await c.chat.completions.create(hot)).choices[0].message.content;
	tap(sampled !== want1.text && again === sampled && topk === want1.text && topp === want1.text,
		"sampling: temperature and seed (the same answer twice), top_k 1 and top_p 1e-6 are greedy",
		`sampled ${show(sampled)}\nagain   ${show(again)}\ntop_k   ${show(topk)}\ntop_p   ${show(topp)}\ngreedy  ${show(want1.text)}`);

	const chunks = await collect(await c.chat.completions.create({ model: name, messages: M1, max_tokens: 24,
		temperature: 0, stream: true, stream_options: { include_usage: true } }));
	const withChoice = chunks.filter((k) => k.choices.length);
	const text = withChoice.map((k) => k.choices[0].delta.content || "").join("");
	const last = chunks[chunks.length - 1];
	tap(text === want1.text, "chat stream: the chunks make the same answer", same(text, want1.text));
	tap(withChoice[0].choices[0].delta.role === "assistant" &&
		withChoice[withChoice.length - 1].choices[0].finish_reason === want1.finish &&
		chunks.every((k) => k.id === chunks[0].id && k.object === "chat.completion.chunk"),
	"chat stream: role first, finish_reason last, one id", show(chunks.slice(-3)));
	tap(last.choices.length === 0 && last.usage && last.usage.prompt_tokens === want1.prompt_tokens &&
		last.usage.completion_tokens === want1.completion_tokens &&
		withChoice.every((k) => k.usage === null),
	"chat stream: include_usage gives a last chunk with the usage", show(last));

	const cr = await c.completions.create({ model: name, prompt: P1, max_tokens: 20, temperature: 0 });
	tap(cr.choices[0].text === wantP.text && cr.choices[0].finish_reason === wantP.finish &&
		cr.usage.completion_tokens === wantP.completion_tokens && cr.object === "text_completion",
	"completion: the greedy continuation of the prompt", same(cr.choices[0].text, wantP.text));
	const cchunks = await collect(await c.completions.create({ model: name, prompt: P1, max_tokens: 20,
		temperature: 0, stream: true }));
	const ctext = cchunks.map((k) => k.choices[0].text).join("");
	tap(ctext === wantP.text && cchunks[cchunks.length - 1].choices[0].finish_reason === wantP.finish,
		"completion stream: the same text, finish_reason last", same(ctext, wantP.text));

	// logprobs: each token's, and its position's likeliest, are the
	// log-softmax of the logits `colibri logits` works out in process.
	{
		const ids = tokens(P1, true);
		const lr = await c.completions.create({ model: name, prompt: ids, max_tokens: 4, temperature: 0, logprobs: 3 });
		const lpc = lr.choices[0].logprobs;
		const gen = run(["logits", "--backend", "user", "--model", modelFile, "--tokens", ids.join(" "),
			"--greedy", "4"]).trim().split(/\s+/).map(Number);
		const lines = run(["logits", "--backend", "user", "--model", modelFile, "--tokens",
			[...ids, ...gen.slice(0, 3)].join(" ")]).trim().split("\n").slice(ids.length - 1);
		let bad = [];
		lines.forEach((l, i) => {
			const x = l.trim().split(/\s+/).map(Number);
			const max = x.reduce((a, v) => (v > a ? v : a), -Infinity);
			const lse = max + Math.log(x.reduce((a, v) => a + Math.exp(v - max), 0));
			const want = x[gen[i]] - lse;
			const top = [...x].sort((a, b) => b - a).slice(0, 3).map((v) => v - lse);
			const got = Object.values(lpc.top_logprobs[i]).sort((a, b) => b - a);
			if (Math.abs(lpc.token_logprobs[i] - want) > 2e-3 || lpc.tokens[i] !== decode([gen[i]]) ||
				got.length !== 3 || got.some((v, k) => Math.abs(v - top[k]) > 2e-3))
				bad.push(`position ${i}: got ${lpc.tokens[i]} ${lpc.token_logprobs[i]} ${show(got)}, ` +
					`want ${show(decode([gen[i]]))} ${want} ${show(top)}`);
		});
		tap(lines.length === 4 && !bad.length && lpc.text_offset[0] === 0,
			"completion logprobs: each token's and the 3 likeliest, as the logits in process give them", bad.join("\n"));
		const lch = await collect(await c.chat.completions.create({ model: name, messages: M1, max_tokens: 8,
			temperature: 0, logprobs: true, top_logprobs: 2, stream: true }));
		const entries = lch.flatMap((k) => k.choices[0]?.logprobs?.content || []);
		tap(entries.length === 8 && entries.every((e) => e.top_logprobs.length === 2 &&
			Math.abs(e.top_logprobs[0].logprob - e.logprob) < 1e-6 && e.logprob <= 0 &&
			Buffer.from(e.bytes).toString("utf8") === e.token) &&
			entries.map((e) => e.token).join("") === lch.map((k) => k.choices[0]?.delta?.content || "").join(""),
			"chat logprobs streamed: one entry a token, greedy the likeliest, the tokens the text", show(entries.slice(0, 3)));
	}

	// A stop string that straddles two chunks (two tokens) of the stream.
	let at = -1;
	let pos = 0;
	const pieces = withChoice.map((k) => k.choices[0].delta.content || "");
	for (let i = 1; i < pieces.length - 1 && at < 0; i++) {
		pos += pieces[i - 1].length;
		if (pieces[i - 1].length >= 2 && pieces[i].length >= 2) at = pos;
	}
	if (at < 0) {
		tap(false, "stop strings: the answer has two chunks of two characters to cut across", show(pieces));
	} else {
		const stop = text.slice(at - 2, at + 2);
		const cut = text.indexOf(stop);
		const want = text.slice(0, cut);
		const s1 = await c.chat.completions.create({ model: name, messages: M1, max_tokens: 24, temperature: 0,
			stop: [stop, "\u0001never"] });
		tap(s1.choices[0].message.content === want && s1.choices[0].finish_reason === "stop",
			`stop string ${show(stop)} across a token boundary: cut before it, finish_reason stop`,
			same(s1.choices[0].message.content, want));
		const s2 = await collect(await c.chat.completions.create({ model: name, messages: M1, max_tokens: 24,
			temperature: 0, stop, stream: true }));
		const t2 = s2.map((k) => k.choices[0]?.delta.content || "").join("");
		tap(t2 === want && !s2.some((k) => (k.choices[0]?.delta.content || "").includes(stop)) &&
			s2[s2.length - 1].choices[0].finish_reason === "stop",
		"stop string, streamed: never sent, not even in part", same(t2, want));
	}

	// Four clients at once, sampling with seeds: each gets what it gets alone.
	const reqs = [0, 1, 2, 3].map((i) => ({ model: name, max_tokens: 16, temperature: 0.9, seed: 100 + i,
		messages: [{ role: "user", content: ["Speak.", "Who comes here?", "Good morrow, sir.", "What news?"][i] }] }));
	const together = await Promise.all(reqs.map((q, i) => (i % 2 ? client().chat.completions.create({ ...q,
		stream: true }).then(collect).then((cs) => cs.map((k) => k.choices[0]?.delta.content || "").join(""))
		: client().chat.completions.create(q).then((x) => x.choices[0].message.content))));
	const alone = [];
	for (const q of reqs) alone.push((await c.chat.completions.create(q)).choices[0].message.content);
	tap(together.every((t, i) => t === alone[i]) && new Set(alone).size > 1,
		"four concurrent clients get what each gets alone", `${show(together)}\n${show(alone)}`);

	// A client that goes away mid-stream: the server cancels the generation
	// and frees its session.  The demo model writes its whole answer (the
	// context, about 220 tokens) in some 70 ms, so on a loaded machine the
	// client may read its first chunk only after the server has finished:
	// that attempt ends "length" (or "stop") and tests nothing.  Each attempt must end
	// exactly one way, cancelled or finished, with its session closed; up to
	// five attempts, of which one must be cancelled.
	const metric = async (re) => {
		const m = re.exec(await (await fetch(base.replace(/\/v1$/, "/metrics"))).text());
		return m ? Number(m[1]) : -1;
	};
	const endedRe = (f) => new RegExp(`^colibri_serve_generations_total\\{finish="${f}"\\} (\\d+)$`, "m");
	const ended = async () => {
		const v = {};
		for (const f of ["cancelled", "length", "stop", "failed"]) v[f] = await metric(endedRe(f));
		return v;
	};
	const attempts = [];
	let good = true;
	for (let a = 0; a < 5 && good && !attempts.some((x) => x.cancelled); a++) {
		const e0 = await ended();
		const ac = new AbortController();
		let aborted = false;
		try {
			const st = await c.chat.completions.create({ model: name, messages: M1, temperature: 0,
				stream: true }, { signal: ac.signal });
			for await (const k of st) {
				if (k.choices[0]?.delta.content) {
					ac.abort();
					aborted = true;
				}
			}
		} catch (e) {
			aborted = aborted && (e instanceof OpenAI.APIUserAbortError || e.name === "AbortError");
		}
		let sessions = -1;
		let d = {};
		for (let i = 0; i < 100; i++) {
			await new Promise((res) => setTimeout(res, 100));
			sessions = (await (await fetch(base.replace(/\/v1$/, "/health"))).json()).sessions;
			const e1 = await ended();
			d = Object.fromEntries(Object.keys(e1).map((f) => [f, e1[f] - e0[f]]));
			if (sessions === 0 && d.cancelled + d.length + d.stop + d.failed >= 1) break;
		}
		const x = { aborted, sessions, ...d };
		attempts.push(x);
		good = aborted && sessions === 0 && d.failed === 0 &&
			d.cancelled + d.length + d.stop === 1;
	}
	tap(good && attempts.some((x) => x.cancelled === 1),
		"a client that aborts a stream: the generation is cancelled, its session closed",
		attempts.map((x) => JSON.stringify(x)).join("\n"));

	// Errors, as the client library sees them.
	try {
		await c.chat.completions.create({ model: "no-such-model", messages: M1 });
		tap(false, "an unknown model is 404", "it answered");
	} catch (e) {
		tap(e instanceof OpenAI.NotFoundError && e.code === "model_not_found", "an unknown model is 404 model_not_found", e.message);
	}
	if (key !== "none") {
		try {
			await client("wrong-key").models.list();
			tap(false, "a wrong API key is 401", "it answered");
		} catch (e) {
			tap(e instanceof OpenAI.AuthenticationError && e.code === "invalid_api_key", "a wrong API key is 401 invalid_api_key", e.message);
		}
	}
	try {
		await c.chat.completions.create({ model: name, messages: M1, n: 3 });
		tap(false, "n = 3 is refused", "it answered");
	} catch (e) {
		tap(e instanceof OpenAI.BadRequestError && e.param === "n", "n = 3 is 400 about n", e.message);
	}
}

main().catch((e) => tap(false, "the client ran through", e.stack)).finally(done);
