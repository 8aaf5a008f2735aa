// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/structured.mjs - structured output (response_format, Ollama's
// format) by constrained decoding, against `colibri serve` on a model with
// random weights, which would never write JSON of itself: whatever it
// draws, every answer must parse and validate against the schema (checked
// by zod, the validator applications use).
//
//   always       the openai client: json_object (sampled: greedy, random
//                weights write spaces into a string for ever), and
//                json_schema from a zod schema (bounded strings, an enum,
//                integer and number ranges, a bounded array, a nullable
//                object: every answer of it ends within --max-tokens),
//                greedy and sampled, streamed and not; a schema the server
//                cannot keep (pattern) refused with 400; /metrics counts
//                the steps;
//   --tools      tool_choice "required" and a named function (a model of
//                the harmony or Hermes format): every answer is calls only,
//                of the tools allowed, arguments valid against the tool's
//                parameters, greedy and sampled, streamed equal to whole;
//                with --clients, the AI SDK's generateText (toolChoice
//                required) and LangChain's bindTools (tool_choice any);
//                a plain model refuses them with 400 (--small);
//   --small      a model of a short context (the demo model's 256
//                positions): a schema of two members only, no json_object;
//   --clients    the clients applications use, on the same server: the
//                Vercel AI SDK's generateObject and streamObject
//                (@ai-sdk/openai-compatible), LangChain's
//                withStructuredOutput (jsonSchema and jsonMode), and the
//                ollama client's format (a schema and "json").
//
// Usage: node structured.mjs --base URL --name MODEL [--key KEY] [--seeds N]
//        [--max-tokens N] [--small 1] [--tools 1] [--clients 1]
// (URL: the server's root, no /v1; KEY: its --api-key).  Prints TAP; exits non-zero if a test failed.
import OpenAI from "openai";
import { z } from "zod";
import { args, done, show, tap } from "./tap.mjs";

const base = args.base;
const name = args.name;
const seeds = Number(args.seeds || 4);
const maxTokens = Number(args["max-tokens"] || 2000);
const oa = new OpenAI({ baseURL: `${base}/v1`, apiKey: args.key || "none", maxRetries: 0, timeout: 900000 });

const Pet = args.small ? z.object({ kind: z.enum(["cat", "dog"]), n: z.number().int().min(0).max(9) }) : z.object({
	name: z.string().max(6),
	kind: z.enum(["cat", "dog", "owl"]),
	age: z.number().int().min(0).max(30),
	weight: z.number().positive().max(100),
	tags: z.array(z.string().max(4)).max(2),
	owner: z.object({ first: z.string().max(5), vip: z.boolean() }).nullable(),
});
const petSchema = z.toJSONSchema(Pet);
const messages = [{ role: "user", content: "Describe a pet as JSON." }];
const attempt = async (f) => {
	try {
		return { value: await f() };
	} catch (e) {
		return { error: e };
	}
};
// The JSON of TEXT validated by SCHEMA (zod), or why not.
const check = (text, schema) => {
	try {
		const r = schema.safeParse(JSON.parse(text));
		return r.success ? null : r.error.message;
	} catch (e) {
		return `${e.message}: ${show(text, 300)}`;
	}
};

// --- the openai client ---------------------------------------------------------------
{
	const Obj = z.record(z.string(), z.unknown());
	let bad = [];
	for (let s = 1; s <= seeds && !args.small; s++) {
		const r = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens,
			temperature: 1, seed: s, response_format: { type: "json_object" } });
		const why = r.choices[0].finish_reason === "stop" ? check(r.choices[0].message.content, Obj) :
			`finish_reason ${r.choices[0].finish_reason}`;
		if (why) bad.push(`seed ${s}: ${why}`);
	}
	if (!args.small) tap(!bad.length, `json_object: ${seeds} sampled answers, each a JSON object`, bad.join("\n"));

	bad = [];
	let greedy = null;
	for (let s = 0; s <= seeds; s++) {
		const r = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens,
			temperature: s ? 1 : 0, seed: s,
			response_format: { type: "json_schema", json_schema: { name: "pet", strict: true, schema: petSchema } } });
		const text = r.choices[0].message.content;
		if (!s) greedy = text;
		const why = r.choices[0].finish_reason === "stop" ? check(text, Pet) :
			`finish_reason ${r.choices[0].finish_reason}: ${show(text, 200)}`;
		if (why) bad.push(`seed ${s}: ${why}`);
	}
	tap(!bad.length, `json_schema (strict, from zod): ${seeds + 1} answers valid against the schema`, bad.join("\n"));

	let streamed = "";
	let finish = null;
	const st = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens, temperature: 0, stream: true,
		response_format: { type: "json_schema", json_schema: { name: "pet", schema: petSchema } } });
	for await (const c of st) {
		streamed += c.choices[0]?.delta?.content || "";
		finish = c.choices[0]?.finish_reason || finish;
	}
	tap(streamed === greedy && finish === "stop" && !check(streamed, Pet),
		"json_schema streamed: the deltas make the answer given whole", `${show(streamed)}\n${show(greedy)}`);

	const e = await attempt(() => oa.chat.completions.create({ model: name, messages, max_tokens: 8,
		response_format: { type: "json_schema", json_schema: { name: "x",
			schema: { type: "object", properties: { a: { type: "string", pattern: "^a+$" } } } } } }));
	tap(e.error?.status === 400 && e.error?.param === "response_format" && /pattern/.test(e.error?.message),
		"a schema keyword it cannot keep (pattern): 400 naming it", show(e.error?.error || e.value));

	const m = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${args.key || "none"}` } })).text();
	const checks = Number(/^colibri_serve_constrained_checks_total (\d+)/m.exec(m)?.[1]);
	tap(checks > 0 && /^colibri_serve_constrained_mask_seconds_total [0-9.]+$/m.test(m),
		"/metrics counts the constrained steps", m.split("\n").filter((l) => /constrained/.test(l) && !l.startsWith("#")).join("\n"));
}

// --- tool_choice required and named -----------------------------------------------------
const Weather = z.object({ city: z.string().max(8), days: z.number().int().min(1).max(7).optional() });
const Add = z.object({ a: z.number().int().min(0).max(99), b: z.number().int().min(0).max(99) });
const tools = [
	{ type: "function", function: { name: "get_weather", description: "The weather of a city.", parameters: z.toJSONSchema(Weather) } },
	{ type: "function", function: { name: "add", description: "Adds two numbers.", parameters: z.toJSONSchema(Add) } },
];
const argSchema = { get_weather: Weather, add: Add };
// Why the answer R is not calls of ALLOWED only, valid arguments each; or null.
const callsWrong = (r, allowed) => {
	const c = r.choices[0];
	if (c.finish_reason !== "tool_calls" || !c.message.tool_calls?.length || c.message.content)
		return `finish_reason ${c.finish_reason}, content ${show(c.message.content, 200)}`;
	for (const t of c.message.tool_calls) {
		if (!allowed.includes(t.function.name)) return `a call of ${t.function.name}`;
		const why = check(t.function.arguments, argSchema[t.function.name]);
		if (why) return `${t.function.name}: ${why}`;
	}
	return null;
};
if (args.tools) {
	let bad = [];
	let greedy = null;
	for (let s = 0; s <= seeds; s++) {
		const r = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens,
			temperature: s ? 1 : 0, seed: s, tools, tool_choice: "required" });
		if (!s) greedy = r.choices[0].message.tool_calls;
		const why = callsWrong(r, ["get_weather", "add"]);
		if (why) bad.push(`seed ${s}: ${why}`);
	}
	tap(!bad.length, `tool_choice required: ${seeds + 1} answers, calls only, arguments valid`, bad.join("\n"));
	bad = [];
	for (let s = 0; s <= seeds; s++) {
		const r = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens,
			temperature: s ? 1 : 0, seed: s, tools, tool_choice: { type: "function", function: { name: "add" } } });
		const why = callsWrong(r, ["add"]);
		if (why) bad.push(`seed ${s}: ${why}`);
	}
	tap(!bad.length, `tool_choice naming add: ${seeds + 1} answers, calls of add only`, bad.join("\n"));
	const st = await oa.chat.completions.create({ model: name, messages, max_tokens: maxTokens, temperature: 0,
		stream: true, tools, tool_choice: "required" });
	const calls = [];
	let finish = null;
	for await (const c of st) {
		for (const d of c.choices[0]?.delta?.tool_calls || []) {
			calls[d.index] ??= { name: "", arguments: "" };
			calls[d.index].name += d.function?.name || "";
			calls[d.index].arguments += d.function?.arguments || "";
		}
		finish = c.choices[0]?.finish_reason || finish;
	}
	tap(finish === "tool_calls" && JSON.stringify(calls) === JSON.stringify(greedy?.map((t) => t.function)),
		"tool_choice required streamed: the deltas make the calls given whole", `${show(calls)}\n${show(greedy)}`);
	const e1 = await attempt(() => oa.chat.completions.create({ model: name, messages, max_tokens: 8, tools,
		tool_choice: { type: "function", function: { name: "nope" } } }));
	const e2 = await attempt(() => oa.chat.completions.create({ model: name, messages, max_tokens: 8,
		tool_choice: "required" }));
	tap(e1.error?.status === 400 && /nope/.test(e1.error?.message) && e2.error?.status === 400 &&
		e1.error?.param === "tool_choice", "a named function not among tools, required without tools: 400",
		`${show(e1.error?.error || e1.value)}\n${show(e2.error?.error || e2.value)}`);
} else if (args.small) {
	const e = await attempt(() => oa.chat.completions.create({ model: name, messages, max_tokens: 8, tools,
		tool_choice: "required" }));
	tap(e.error?.status === 400 && /tool-call format/.test(e.error?.message),
		"tool_choice required on a model without a tool-call format: 400", show(e.error?.error || e.value));
}

// --- the clients applications use ---------------------------------------------------
if (args.clients) {
	const { generateObject, streamObject } = await import("ai");
	const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
	const provider = createOpenAICompatible({ name: "colibri", baseURL: `${base}/v1`, supportsStructuredOutputs: true });

	let r = await attempt(() => generateObject({ model: provider.chatModel(name), schema: Pet, prompt: "A pet.",
		temperature: 0, maxOutputTokens: maxTokens, maxRetries: 0 }));
	tap(r.value && !check(JSON.stringify(r.value.object), Pet) && r.value.finishReason === "stop",
		"AI SDK generateObject: an object of the schema", show(r.error?.message || r.value?.object));
	const so = streamObject({ model: provider.chatModel(name), schema: Pet, prompt: "A pet.", temperature: 1,
		seed: 7, maxOutputTokens: maxTokens, maxRetries: 0, onError: () => {} });
	let partials = 0;
	r = await attempt(async () => {
		for await (const p of so.partialObjectStream) if (p) partials++;
		return so.object;
	});
	tap(r.value && !check(JSON.stringify(r.value), Pet) && partials > 1,
		`AI SDK streamObject: ${partials} partial objects, then one of the schema`, show(r.error?.message || r.value));

	if (args.tools) {
		const { generateText, tool } = await import("ai");
		r = await attempt(() => generateText({ model: provider.chatModel(name), prompt: "Add 2 and 3.",
			tools: { get_weather: tool({ description: "The weather of a city.", inputSchema: Weather }),
				add: tool({ description: "Adds two numbers.", inputSchema: Add }) },
			toolChoice: "required", temperature: 0, maxOutputTokens: maxTokens, maxRetries: 0 }));
		tap(r.value?.toolCalls?.length > 0 && r.value.toolCalls.every((c) => !argSchema[c.toolName]?.safeParse(c.input).error),
			"AI SDK generateText (toolChoice required): tool calls with valid input",
			show(r.error?.message || r.value?.toolCalls));
	}

	const { ChatOpenAI } = await import("@langchain/openai");
	const lc = new ChatOpenAI({ model: name, apiKey: "none", configuration: { baseURL: `${base}/v1` },
		temperature: 0, maxTokens, maxRetries: 0 });
	r = await attempt(() => lc.withStructuredOutput(Pet, { method: "jsonSchema", name: "pet" }).invoke("A pet."));
	tap(r.value && !check(JSON.stringify(r.value), Pet),
		"LangChain withStructuredOutput (jsonSchema): an object of the schema", show(r.error?.message || r.value));
	// json_object sampled (greedy, random weights write spaces into a string for ever)
	const lcs = new ChatOpenAI({ model: name, apiKey: "none", configuration: { baseURL: `${base}/v1` },
		temperature: 1, maxTokens, maxRetries: 0, modelKwargs: { seed: 3 } });
	r = await attempt(() => lcs.withStructuredOutput(z.object({}).passthrough(), { method: "jsonMode" }).invoke("A pet."));
	tap(r.value && typeof r.value === "object" && !Array.isArray(r.value),
		"LangChain withStructuredOutput (jsonMode): a JSON object", show(r.error?.message || r.value));

	if (args.tools) {
		const { tool } = await import("@langchain/core/tools");
		const add = tool(async ({ a, b }) => String(a + b), { name: "add", description: "Adds two numbers.", schema: Add });
		r = await attempt(() => lc.bindTools([add], { tool_choice: "any" }).invoke("Add 2 and 3."));
		tap(r.value?.tool_calls?.length > 0 && r.value.tool_calls.every((c) => c.name === "add" && Add.safeParse(c.args).success),
			"LangChain bindTools (tool_choice any): calls of add with valid args",
			show(r.error?.message || r.value?.tool_calls));
	}

	const { Ollama } = await import("ollama");
	const o = new Ollama({ host: base });
	r = await attempt(() => o.chat({ model: name, messages, format: petSchema, options: { temperature: 0, num_predict: maxTokens } }));
	tap(r.value && r.value.done_reason === "stop" && !check(r.value.message.content, Pet),
		"ollama chat format (a schema): JSON of the schema", show(r.error?.message || r.value));
	r = await attempt(() => o.generate({ model: name, prompt: "A pet:", format: "json", options: { temperature: 1, seed: 3, num_predict: maxTokens } }));
	tap(r.value && r.value.done_reason === "stop" && !check(r.value.response, z.record(z.string(), z.unknown())),
		"ollama generate format \"json\": a JSON object", show(r.error?.message || r.value));
}
done();
