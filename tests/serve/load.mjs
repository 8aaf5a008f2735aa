// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/load.mjs - a bounded load on a running `colibri serve` over
// loopback: --requests requests from --clients clients at once (each an
// `openai` client of its own, one request after the other), a mix of
// chat and text completions, streamed and not; every --abort-every-th
// request asks for a long answer and goes away after its first chunk.
//
//   node load.mjs --base URL --model NAME [--key K] [--requests 200]
//        [--clients 8] [--abort-every 10] [--max-tokens 16] [--check]
//
// The load comes in two halves, the server let go idle after each.
// Prints the figures (requests/s, time to first token p50/p99 of the
// streamed requests, tokens/s, over both halves) as one "# load: {...}"
// JSON line.  With --check it prints TAP: every request that was not
// abandoned succeeded, the server's sessions are back to 0 afterwards, the
// abandoned ones were cancelled (never more than were abandoned), and the
// heap the server holds at idle (malloc's bytes in use, its /metrics
// colibri_serve_heap_bytes) is no larger after the second half than after
// the first, give or take 128 KiB: a request that left anything behind
// would leave it a hundred times (the smallest, its parsed request, is a
// few KiB; a session of the demo model half a MiB).  Resident memory is
// printed too; it is not the measure, since malloc keeps freed memory in
// per-thread arenas and libmicrohttpd runs a thread per connection.
import OpenAI from "openai";

const args = Object.fromEntries(
	process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1] ?? "1"]] : acc), []),
);
const base = args.base;
const name = args.model;
const total = Number(args.requests || 200);
const clients = Number(args.clients || 8);
const abortEvery = Number(args["abort-every"] || 10);
const maxTokens = Number(args["max-tokens"] || 16);
const check = "check" in args;

const prompts = ["ROMEO:", "JULIET:", "Good morrow.", "What news?", "Who is there?", "Speak."];
let next = 0;
let upto = 0;
const results = [];

async function one(c, i) {
	const abort = abortEvery > 0 && i % abortEvery === abortEvery - 1;
	const kind = i % 4;				/* 0, 1: chat; 2, 3: completions; odd: plain */
	const stream = abort || kind % 2 === 0;
	const chat = kind < 2;
	const q = { model: name, max_tokens: abort ? 10000 : maxTokens, temperature: 0.8, seed: i };
	if (chat) q.messages = [{ role: "user", content: prompts[i % prompts.length] }];
	else q.prompt = prompts[i % prompts.length];
	const r = { i, abort, stream, t0: performance.now(), ttft: null, ok: false, tokens: 0, err: null };
	const ac = new AbortController();
	try {
		const api = chat ? c.chat.completions : c.completions;
		if (!stream) {
			const x = await api.create(q);
			r.ok = !!x.choices[0].finish_reason;
			r.tokens = x.usage.completion_tokens;
		} else {
			const s = await api.create({ ...q, stream: true, stream_options: { include_usage: true } },
				{ signal: ac.signal });
			let finish = null;
			for await (const k of s) {
				const t = chat ? k.choices[0]?.delta.content : k.choices[0]?.text;
				if (r.ttft === null && t) r.ttft = performance.now() - r.t0;
				if (k.choices[0]?.finish_reason) finish = k.choices[0].finish_reason;
				if (k.usage) r.tokens = k.usage.completion_tokens;
				if (abort && r.ttft !== null) {
					ac.abort();
					break;
				}
			}
			r.ok = abort || !!finish;
		}
	} catch (e) {
		if (!(abort && (e instanceof OpenAI.APIUserAbortError || e.name === "AbortError"))) r.err = `${e.status ?? ""} ${e.message}`;
		else r.ok = true;
	}
	r.t1 = performance.now();
	return r;
}

// One client each, kept across both halves: the same connections stay open.
const pool = Array.from({ length: clients },
	() => new OpenAI({ baseURL: base, apiKey: args.key || "none", maxRetries: 0, timeout: 600000 }));

async function worker(c) {
	for (;;) {
		const i = next++;
		if (i >= upto) {
			next = upto;
			return;
		}
		results.push(await one(c, i));
	}
}

const pct = (a, p) => (a.length ? a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))] : 0);
const cancelledRe = /^colibri_serve_generations_total\{finish="cancelled"\} (\d+)$/m;

const metrics = async () => (await fetch(base.replace(/\/v1$/, "/metrics"))).text();
const num = (text, re) => {
	const m = re.exec(text);
	return m ? Number(m[1]) : -1;
};
const heapRe = /^colibri_serve_heap_bytes (\d+)$/m;
const rssRe = /^process_resident_memory_bytes (\d+)$/m;

// Until the server has no session open and no connection but the one
// asking (at most 30 s; the clients close their idle keep-alive sockets
// after 4 s): its sessions then.  Each connection holds libmicrohttpd's
// 32 KiB pool, so the heap at idle is compared at the same count.
async function idle() {
	let h = { sessions: -1 };
	for (let i = 0; i < 300; i++) {
		h = await (await fetch(base.replace(/\/v1$/, "/health"))).json();
		if (h.sessions === 0 && h.connections <= 1) break;
		await new Promise((res) => setTimeout(res, 100));
	}
	return h.sessions;
}

async function half(to) {
	upto = to;
	const t0 = performance.now();
	await Promise.all(pool.map(worker));
	const secs = (performance.now() - t0) / 1000;
	const sessions = await idle();
	const m = await metrics();
	return { secs, sessions, heap: num(m, heapRe), rss: num(m, rssRe) };
}

async function main() {
	const cancelled0 = num(await metrics(), cancelledRe);
	const a = await half(Math.floor(total / 2));
	const b = await half(total);
	const secs = a.secs + b.secs;
	const ttft = results.filter((r) => r.ttft !== null).map((r) => r.ttft).sort((x, y) => x - y);
	const failed = results.filter((r) => !r.ok || r.err);
	const aborted = results.filter((r) => r.abort).length;
	const tokens = results.filter((r) => !r.abort).reduce((s, r) => s + r.tokens, 0);
	const fig = {
		requests: results.length, clients, aborted, failed: failed.length, seconds: +secs.toFixed(2),
		requests_per_s: +(results.length / secs).toFixed(2),
		ttft_p50_ms: +pct(ttft, 50).toFixed(1), ttft_p99_ms: +pct(ttft, 99).toFixed(1),
		completion_tokens_per_s: +(tokens / secs).toFixed(1),
	};
	const mib = (x) => (x / 1048576).toFixed(2);
	console.log(`# load: ${JSON.stringify(fig)}`);
	console.log(`# load: at idle after each half: heap ${a.heap} / ${b.heap} bytes, resident ${mib(a.rss)} / ${mib(b.rss)} MiB`);
	if (!check) return;
	let n = 0;
	let bad = 0;
	const tap = (ok, what, detail) => {
		n++;
		if (!ok) bad++;
		console.log(`${ok ? "ok" : "not ok"} ${n} - ${what}`);
		if (!ok && detail) for (const l of String(detail).split("\n").slice(0, 10)) console.log(`# ${l}`);
	};
	tap(results.length === total && failed.length === 0,
		`all ${total - aborted} requests that stayed succeeded (${clients} clients, ${aborted} went away)`,
		failed.slice(0, 5).map((r) => `request ${r.i}: ${r.err}`).join("\n"));
	const cancelled = num(await metrics(), cancelledRe) - cancelled0;
	tap(a.sessions === 0 && b.sessions === 0, "the server's sessions are back to 0",
		`sessions ${a.sessions}, ${b.sessions}`);
	tap(cancelled > 0 && cancelled <= aborted, "the requests that went away were cancelled",
		`cancelled ${cancelled}, went away ${aborted}`);
	tap(a.heap > 0 && b.heap - a.heap < 128 << 10, "the server's heap is flat",
		`heap at idle ${a.heap} bytes after the first half, ${b.heap} after the second`);
	console.log(`1..${n}`);
	process.exitCode = bad ? 1 : 0;
}

main().catch((e) => {
	console.log(`not ok 1 - load ran through\n# ${e.stack}\n1..1`);
	process.exitCode = 1;
});
