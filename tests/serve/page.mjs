// SPDX-License-Identifier: MIT OR GPL-2.0
//
// tests/serve/page.mjs - the page at / (userspace/serve/page/index.html) in
// headless Chromium (Debian's chromium, driven by puppeteer-core): it loads
// with no console error, its live view (/live) shows the model, a chat
// round trip completes through the page's own form, the routing heat grows
// while the answer runs, and the page as it then looks is kept as a
// screenshot (--shot FILE).
//
// Usage: node page.mjs --base URL --name MODEL --shot FILE [--chromium PATH]
// Prints TAP; exits non-zero if a test failed.
import puppeteer from "puppeteer-core";
import { args, done, show, tap } from "./tap.mjs";

const browser = await puppeteer.launch({
	executablePath: args.chromium || "/usr/bin/chromium",
	headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
	const page = await browser.newPage();
	await page.setViewport({ width: 1280, height: 800 });
	const problems = [];
	page.on("console", (m) => {
		if (m.type() === "error" || m.type() === "warn") problems.push(`${m.type()}: ${m.text()}`);
	});
	page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
	page.on("requestfailed", (r) => {
		// the live view's stream is cut when the browser closes, not before
		if (!r.url().endsWith("/live")) problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
	});

	const r = await page.goto(`${args.base}/`, { waitUntil: "load" });
	tap(r.status() === 200 && (await page.title()) === "colibri serve" &&
		/text\/html/.test(r.headers()["content-type"]), "GET / is the page", `${r.status()} ${show(r.headers())}`);

	await page.waitForFunction(() => window.colibri?.events >= 2, { timeout: 20000 });
	const first = await page.evaluate(() => ({ live: window.colibri.live, model: document.getElementById("model").textContent,
		stats: document.getElementById("stats").children.length }));
	tap(first.model === args.name && first.live.layers > 0 && first.stats >= 5,
		"the live view shows the model, its shape and the counters", show(first));

	const heat0 = await page.evaluate(() => window.colibri.heatTotal);
	await page.type("#input", "Hello, who are you?");
	await page.keyboard.press("Enter");
	await page.waitForFunction(() => window.colibri.answers >= 1 || window.colibri.errors.length, { timeout: 120000 });
	// the last events of the answer's passes, then a look
	await page.waitForFunction((h) => window.colibri.heatTotal > h, { timeout: 20000 }, heat0).catch(() => {});
	const after = await page.evaluate(() => ({
		answers: window.colibri.answers, errors: window.colibri.errors, heat: window.colibri.heatTotal,
		bubbles: [...document.querySelectorAll(".msg")].map((m) => m.className),
		meta: document.querySelector(".msg.assistant .meta")?.textContent,
		tokens: window.colibri.live.tokens,
	}));
	tap(after.answers === 1 && !after.errors.length && after.bubbles.join() === "msg user,msg assistant" &&
		/(stop|length|tool_calls) · \d+ tokens/.test(after.meta),
		"a chat round trip through the page's form: the answer streamed, its finish and tokens shown", show(after));
	tap(after.heat > heat0 && after.tokens > 0,
		"the routing heat grew while the answer ran (the passes' traces reached /live)", show({ heat0, ...after }));

	await page.screenshot({ path: args.shot });
	tap(!problems.length, "no console error or warning, no failed request", problems.join("\n"));
} catch (e) {
	tap(false, "the browser ran through", e.stack);
} finally {
	await browser.close();
}
done();
