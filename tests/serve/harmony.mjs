// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/harmony.mjs - the official `openai` npm client against a
// `colibri serve` of harmony-chat (tests/serve/make-fixture): a model with
// harmony's tokens and the built-in harmony template whose weights are a
// Markov chain on tokens.  Its answers must come split as vLLM and
// llama.cpp's server split GPT-OSS's: the analysis channel in
// reasoning_content, the final one in content, a call in tool_calls with
// finish_reason tool_calls, and never a harmony marker in any text.
//
//   - greedy, the chain says one tool call, <|channel|>commentary
//     to=functions.f<|constrain|>json<|message|>{"city": "Oslo"}<|call|>:
//     exactly that call, plain and streamed (the client's own stream
//     helper puts the chunks back together);
//   - sampled (seeds 1..N), it walks harmony answers of every kind, some
//     malformed: for each, the streamed deltas concatenated are the plain
//     answer, the shapes are OpenAI's, no marker shows, and a stop string
//     cuts the content (only: the same reasoning) where it first comes;
//     over all seeds, every kind of part was seen.
//
// With --format hermes, the same of hermes-chat: the Hermes format
// (Qwen's): <think> at the start in reasoning_content, <tool_call> JSON in
// tool_calls (arguments as compact JSON), no tag in any text.
//
// Usage: node harmony.mjs --base URL --name NAME [--format harmony|hermes] [--seeds N]
// Prints TAP; exits non-zero if a test failed.
import OpenAI from "openai";
import { args, done, show, tap } from "./tap.mjs";

const { base, name } = args;
const seeds = Number(args.seeds || 16);
const hermes = args.format === "hermes";

const client = new OpenAI({ baseURL: base, apiKey: "none", maxRetries: 0, timeout: 600000 });
const messages = [{ role: "user", content: "What is the weather in Oslo?" }];
const tools = [{ type: "function", function: { name: "f", description: "The weather of a city.",
	parameters: { type: "object", properties: { city: { type: "string" } } } } }];
// Hermes: a tag stays in the content only around what was not a call
// (no text is lost), never around the call the chain says.
const markers = hermes ? /<\/?think>|<\|im_(start|end)\|>|<tool_call>\s*\{"name": "f", "arguments": \{"city": "Oslo"\}\}/ :
	/<\|(start|channel|message|end|return|call|constrain)\|>/;

// The parts of a plain answer: content, reasoning, calls [{name, arguments}], finish, usage.
const plain = (r) => {
	const m = r.choices[0].message;
	return {
		content: m.content, reasoning: m.reasoning_content,
		calls: (m.tool_calls || []).map((c) => ({ id: c.id, type: c.type, name: c.function.name, arguments: c.function.arguments })),
		finish: r.choices[0].finish_reason, tokens: r.usage.completion_tokens,
	};
};

// The same of a stream, its deltas concatenated.
const streamed = async (req) => {
	const s = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
	const a = { content: "", reasoning: "", calls: [], finish: null, tokens: -1, chunks: [] };
	for await (const ch of s) {
		a.chunks.push(ch);
		if (ch.usage) a.tokens = ch.usage.completion_tokens;
		const c = ch.choices[0];
		if (!c) continue;
		if (c.finish_reason) a.finish = c.finish_reason;
		const d = c.delta;
		if (typeof d.content === "string") a.content += d.content;
		if (typeof d.reasoning_content === "string") a.reasoning += d.reasoning_content;
		for (const t of d.tool_calls || []) {
			if (!a.calls[t.index]) a.calls[t.index] = { id: t.id, type: t.type, name: "", arguments: "" };
			a.calls[t.index].name += t.function?.name || "";
			a.calls[t.index].arguments += t.function?.arguments || "";
		}
	}
	return a;
};

// OpenAI's shapes, no marker anywhere.
const wellFormed = (p) => {
	const bad = [];
	if (typeof p.reasoning !== "string") bad.push("reasoning_content is not a string");
	if (!(typeof p.content === "string" || (p.content === null && p.calls.length))) bad.push("content is neither a string nor null with tool calls");
	if (!["stop", "length", "tool_calls"].includes(p.finish)) bad.push(`finish_reason ${p.finish}`);
	if (p.calls.length && p.finish === "stop") bad.push("tool calls but finish_reason stop");
	for (const c of p.calls) {
		if (c.type !== "function" || !/^call_/.test(c.id) || typeof c.name !== "string" || typeof c.arguments !== "string")
			bad.push(`tool call ${show(c)}`);
	}
	const text = [p.content || "", p.reasoning, ...p.calls.flatMap((c) => [c.name, c.arguments])].join("\u0000");
	if (markers.test(text)) bad.push("a marker in the text");
	return bad.join("; ") || undefined;
};

// --- greedy: one tool call ----------------------------------------------------------
{
	const req = { model: name, messages, tools, temperature: 0, max_tokens: 50 };
	// harmony: 8 tokens, the arguments as the model wrote them; Hermes:
	// <tool_call>, the JSON, </tool_call>, <|im_end|>, the arguments compact
	const args1 = hermes ? '{"city":"Oslo"}' : '{"city": "Oslo"}';
	const ntok = hermes ? 4 : 8;
	const want = { content: null, reasoning: "", calls: [{ name: "f", arguments: args1 }], finish: "tool_calls", tokens: ntok };
	const r = plain(await client.chat.completions.create(req));
	const got = { ...r, calls: r.calls.map(({ name, arguments: a }) => ({ name, arguments: a })) };
	tap(JSON.stringify(got) === JSON.stringify(want) && !wellFormed(r),
		"greedy: the tool call, as tool_calls with finish_reason tool_calls and no content", `got  ${show(r)}\nwant ${show(want)}\n${wellFormed(r)}`);
	const s = await streamed(req);
	const sc = s.calls.map(({ name, arguments: a }) => ({ name, arguments: a }));
	tap(JSON.stringify(sc) === JSON.stringify(want.calls) && s.content === "" && s.reasoning === "" &&
		s.finish === "tool_calls" && s.tokens === ntok && /^call_/.test(s.calls[0]?.id),
		"greedy, streamed: the same call in tool_calls deltas", show({ ...s, chunks: undefined }));
	// the client's own accumulator
	const helper = client.chat.completions.stream(req);
	const fin = await helper.finalChatCompletion();
	const m = fin.choices[0].message;
	tap(m.tool_calls?.length === 1 && m.tool_calls[0].function.name === "f" &&
		m.tool_calls[0].function.arguments === args1 && fin.choices[0].finish_reason === "tool_calls",
		"greedy, the client's stream helper: finalChatCompletion() has the call", show(fin));
}

// --- sampled: answers of every kind -------------------------------------------------
const seen = { reasoning: 0, content: 0, calls: 0, both: 0 };
const bad = [];
for (let seed = 1; seed <= seeds; seed++) {
	const req = { model: name, messages, seed, temperature: 1, max_tokens: 60 };
	const p = plain(await client.chat.completions.create(req));
	const s = await streamed(req);
	const why = wellFormed(p);
	if (why) bad.push(`seed ${seed}: ${why}: ${show(p)}`);
	const strip = (cs) => cs.map(({ name, arguments: a }) => ({ name, arguments: a }));
	if ((p.content ?? "") !== s.content || p.reasoning !== s.reasoning || p.finish !== s.finish ||
	    p.tokens !== s.tokens || JSON.stringify(strip(p.calls)) !== JSON.stringify(strip(s.calls)))
		bad.push(`seed ${seed}: the stream is not the plain answer\nplain  ${show(p)}\nstream ${show({ ...s, chunks: undefined })}`);
	for (const ch of s.chunks)
		if (markers.test(JSON.stringify(ch))) bad.push(`seed ${seed}: a marker in a chunk ${show(ch)}`);
	seen.reasoning += p.reasoning !== "";
	seen.content += (p.content ?? "") !== "";
	seen.calls += p.calls.length > 0;
	seen.both += p.reasoning !== "" && (p.content ?? "") !== "";
	// a stop string cuts the content where it first comes, and not the reasoning
	const c = p.content ?? "";
	if (c.includes("answer")) {
		const t = plain(await client.chat.completions.create({ ...req, stop: "answer" }));
		if (t.content !== c.slice(0, c.indexOf("answer")) || !p.reasoning.startsWith(t.reasoning) || t.finish !== "stop")
			bad.push(`seed ${seed}: stop "answer": ${show(t)} after ${show(p)}`);
		seen.stop = (seen.stop || 0) + 1;
	}
}
tap(!bad.length, `sampled, ${seeds} seeds: OpenAI's shapes, no marker, the stream is the plain answer, stop strings cut the content`,
	bad.join("\n"));
tap(seen.reasoning && seen.content && seen.calls && seen.both && seen.stop,
	`the seeds said every part: ${show(seen)}`, show(seen));

done();
