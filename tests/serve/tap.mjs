// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/tap.mjs - what the client scripts of tests/serve/ share
// (openai.mjs, harmony.mjs, ollama.mjs): their command line (--name VALUE
// pairs) and their TAP output, with the plan and the exit status at the end.

export const args = Object.fromEntries(
	process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);

let n = 0;
let failed = 0;

// One test: "ok N - WHAT", or "not ok" with the first lines of DETAIL as comments.
export const tap = (ok, what, detail) => {
	n++;
	if (!ok) failed++;
	console.log(`${ok ? "ok" : "not ok"} ${n} - ${what}`);
	if (!ok && detail !== undefined)
		for (const l of String(detail).split("\n").slice(0, 12)) console.log(`# ${l}`);
};

// A value as JSON, cut to LEN characters, for a diagnostic.
export const show = (s, len = 600) => JSON.stringify(s)?.slice(0, len);

// The plan, and exit: non-zero if a test failed.
export const done = () => {
	console.log(`1..${n}`);
	process.exit(failed ? 1 : 0);
};
