// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/ollama.mjs - the official `ollama` npm client against
// `colibri serve`'s Ollama API (docs/serve.md), on two servers:
//
//   --demo URL    the demo model (no template): /api/generate raw and
//                 /api/chat give, greedy, exactly what /v1/completions and
//                 /v1/chat/completions give for the same request (the
//                 openai client on the same server); list, show, version;
//                 errors as Ollama's {"error": "..."} with their statuses;
//                 an aborted stream leaves no session behind;
//   --hermes URL  hermes-chat (tests/serve/make-fixture: Qwen-like, its
//                 answers thinking, text and <tool_call> JSON): greedy, the
//                 tool call with its arguments as an object, whole and
//                 streamed; sampled, each stream's pieces make the whole
//                 answer, thinking in "thinking".
//
// Usage: node ollama.mjs --demo URL [--key KEY] [--hermes URL]
// (--key: the demo server's --api-key, sent as Ollama clients send headers)
// Prints TAP; exits non-zero if a test failed.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { args, done, show, tap } from "./tap.mjs";


const attempt = async (f) => {
	try {
		return { value: await f() };
	} catch (e) {
		return { error: e };
	}
};

// --- the demo model: the same answers as the OpenAI API -------------------------------
{
	const headers = args.key ? { Authorization: `Bearer ${args.key}` } : undefined;
	const o = new Ollama({ host: args.demo, headers });
	const oa = new OpenAI({ baseURL: `${args.demo}/v1`, apiKey: args.key || "none", maxRetries: 0, timeout: 600000 });
	const name = "shakespeare-moe";

	const l = await o.list();
	tap(l.models.length === 1 && l.models[0].name === `${name}:latest` && l.models[0].details.family === "mixtral",
		"list(): the one model, NAME:latest, its family", show(l));
	const s = await o.show({ model: `${name}:latest` });
	tap(s.capabilities.includes("completion") && s.model_info["general.architecture"] === "mixtral" &&
		s.model_info["mixtral.context_length"] === 256, "show(): capabilities and model_info", show(s));
	const v = await o.version();
	tap(/^\d+\.\d+\.\d+$/.test(v.version), "version()", show(v));

	const g = await o.generate({ model: name, prompt: "ROMEO:", raw: true, options: { temperature: 0, num_predict: 24 } });
	const c = await oa.completions.create({ model: name, prompt: "ROMEO:", temperature: 0, max_tokens: 24 });
	tap(g.done && g.response === c.choices[0].text && g.eval_count === 24 && g.done_reason === "length" &&
		g.prompt_eval_count === c.usage.prompt_tokens && g.total_duration > 0,
		"generate(raw): the text of /v1/completions, the counts", `${show(g)}\n${show(c)}`);
	let streamed = "";
	let last = null;
	for await (const p of await o.generate({ model: name, prompt: "ROMEO:", raw: true, stream: true,
		options: { temperature: 0, num_predict: 24 } })) {
		streamed += p.response;
		last = p;
	}
	tap(streamed === g.response && last.done && last.eval_count === 24, "generate(raw), streamed: the same text, then done",
		`${show(streamed)}\n${show(last)}`);

	const msgs = [{ role: "user", content: "Speak, friend." }];
	const ch = await o.chat({ model: name, messages: msgs, options: { temperature: 0, num_predict: 16 } });
	const oc = await oa.chat.completions.create({ model: name, messages: msgs, temperature: 0, max_tokens: 16 });
	tap(ch.message.role === "assistant" && ch.message.content === oc.choices[0].message.content && ch.done,
		"chat(): the content of /v1/chat/completions", `${show(ch)}\n${show(oc)}`);
	let sc = "";
	for await (const p of await o.chat({ model: name, messages: msgs, stream: true, options: { temperature: 0, num_predict: 16 } }))
		sc += p.message.content;
	tap(sc === ch.message.content, "chat(), streamed: the same content", show(sc));
	const seeded = async () => (await o.chat({ model: name, messages: msgs, options: { temperature: 1, seed: 7, num_predict: 16 } })).message.content;
	const s1 = await seeded();
	tap(s1 === await seeded() && s1 !== ch.message.content, "options.seed: the same sampled answer twice", show(s1));

	const errs = [
		["an unknown model: 404", () => o.chat({ model: "nope", messages: msgs }), 404, /not found|does not exist/],
		["images: 400", () => o.chat({ model: name, messages: [{ role: "user", content: "x", images: ["aGk="] }] }), 400, /images/],
		["a format neither \"json\" nor a schema: 400", () => o.chat({ model: name, messages: msgs, format: "yaml" }), 400, /format/],
		["an option away from its neutral value: 400", () => o.chat({ model: name, messages: msgs, options: { typical_p: 0.5 } }), 400, /typical_p/],
		["show() of an unknown model: 404", () => o.show({ model: "nope" }), 404, /not found/],
	];
	for (const [what, f, status, re] of errs) {
		const r = await attempt(f);
		tap(r.error && r.error.status_code === status && re.test(r.error.error),
			`${what}, said as Ollama's {"error": "..."}`, r.error ? `${r.error.status_code} ${r.error.error}` : show(r.value));
	}
	// the penalties: Ollama's names, the OpenAI API's answers
	const pen = { repeat_penalty: 1.5, repeat_last_n: -1, presence_penalty: 1, frequency_penalty: 0.5, min_p: 0.05 };
	const op = await o.chat({ model: name, messages: msgs, options: { temperature: 0, num_predict: 16, ...pen } });
	const oap = await oa.chat.completions.create({ model: name, messages: msgs, temperature: 0, max_tokens: 16,
		repetition_penalty: 1.5, presence_penalty: 1, frequency_penalty: 0.5, min_p: 0.05 });
	tap(op.message.content === oap.choices[0].message.content && op.message.content !== ch.message.content,
		"repeat_penalty, presence_penalty, frequency_penalty, min_p: the OpenAI API's answer, not the plain one",
		`${show(op.message)}\n${show(oap.choices[0].message)}`);
	const fine = await attempt(() => o.chat({ model: name, messages: msgs, options: { num_ctx: 4096, num_thread: 2, num_predict: 2 }, keep_alive: "5m" }));
	tap(fine.value?.done, "runner options (num_ctx, num_thread) and keep_alive are taken, not used", show(fine));

	// an aborted stream: the server's session goes at once
	const it = await o.chat({ model: name, messages: msgs, stream: true, options: { num_predict: 200 } });
	for await (const p of it) {
		if (p.message.content) {
			it.abort();
			break;
		}
	}
	let sessions = -1;
	for (let i = 0; i < 50 && sessions !== 0; i++) {
		await new Promise((r) => setTimeout(r, 100));
		sessions = (await (await fetch(`${args.demo}/health`)).json()).sessions;
	}
	tap(sessions === 0, "an aborted stream: its session closed", `sessions ${sessions}`);
}

// --- hermes-chat: tool calls and thinking -----------------------------------------------
if (args.hermes) {
	const o = new Ollama({ host: args.hermes });
	const name = "hermes-chat";
	const msgs = [{ role: "user", content: "What is the weather in Oslo?" }];
	const tools = [{ type: "function", function: { name: "f", description: "The weather of a city.",
		parameters: { type: "object", properties: { city: { type: "string" } } } } }];

	const r = await o.chat({ model: name, messages: msgs, tools, options: { temperature: 0 } });
	const call = r.message.tool_calls?.[0];
	tap(r.message.tool_calls?.length === 1 && call.function.name === "f" &&
		JSON.stringify(call.function.arguments) === '{"city":"Oslo"}' && r.message.content === "" && r.done,
		"chat() greedy: the tool call, its arguments an object", show(r));
	const calls = [];
	let done = null;
	for await (const p of await o.chat({ model: name, messages: msgs, tools, stream: true, options: { temperature: 0 } })) {
		calls.push(...(p.message.tool_calls || []));
		if (p.done) done = p;
	}
	tap(calls.length === 1 && JSON.stringify(calls[0]) === JSON.stringify(call) && done?.eval_count === 4,
		"chat() greedy, streamed: the same call, before the last line", `${show(calls)}\n${show(done)}`);
	// the call sent back, with the tool's answer: rendered and answered
	const back = await attempt(() => o.chat({ model: name, options: { temperature: 0, num_predict: 8 },
		messages: [...msgs, r.message, { role: "tool", content: "Sunny.", tool_name: "f" }] }));
	tap(back.value?.done, "a conversation with the call and the tool's answer is taken", show(back));

	const bad = [];
	let thought = 0;
	for (let seed = 1; seed <= 12; seed++) {
		const req = { model: name, messages: msgs, tools, options: { temperature: 1, seed, num_predict: 40 } };
		const whole = await o.chat(req);
		const acc = { content: "", thinking: "", calls: [] };
		for await (const p of await o.chat({ ...req, stream: true })) {
			acc.content += p.message.content;
			acc.thinking += p.message.thinking || "";
			acc.calls.push(...(p.message.tool_calls || []));
		}
		const w = { content: whole.message.content, thinking: whole.message.thinking || "", calls: whole.message.tool_calls || [] };
		if (JSON.stringify(w) !== JSON.stringify(acc))
			bad.push(`seed ${seed}: whole ${show(w)} streamed ${show(acc)}`);
		thought += w.thinking !== "";
	}
	tap(!bad.length && thought > 0, `sampled, 12 seeds: the streamed pieces make the whole answer (thinking in ${thought})`,
		bad.join("\n"));
}

done();
