// Serves the browser-test page on 127.0.0.1: the esbuild bundle of harness-entry.ts (with `obsidian`
// mapped to the DOM/workspace stand-ins), the plugin's real styles.css, and /api/* forwarded to the
// Ollama test server (same origin for the page, so no CORS set-up; streamed through, aborts forwarded).
import * as http from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { startLoopbackServer } from "../../support/servers/loopback-server";

const ROOT = join(__dirname, "..", "..", "..");

export interface HarnessServer {
  url: string;
  close(): Promise<void>;
}

export async function bundleHarness(): Promise<string> {
  const result = await build({
    entryPoints: [join(__dirname, "harness-entry.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "chrome120",
    sourcemap: "inline",
    alias: { obsidian: join(__dirname, "obsidian-shim.ts") },
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

export async function startHarnessServer(ollamaUrl: string): Promise<HarnessServer> {
  const bundle = await bundleHarness();
  const files: Record<string, { type: string; body: string | (() => string) }> = {
    "/": { type: "text/html", body: readFileSync(join(__dirname, "index.html"), "utf8") },
    "/harness.js": { type: "text/javascript", body: bundle },
    // Read per request so a styles.css change shows without restarting.
    "/styles.css": { type: "text/css", body: () => readFileSync(join(ROOT, "styles.css"), "utf8") },
    "/obsidian-like.css": { type: "text/css", body: readFileSync(join(__dirname, "obsidian-like.css"), "utf8") },
  };
  const target = new URL(ollamaUrl);

  return startLoopbackServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path.startsWith("/api/")) {
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // The page pressed Stop (fetch aborted): drop the upstream request too, as a direct connection would.
      res.on("close", () => upstream.destroy());
      req.pipe(upstream);
      return;
    }
    const file = files[path];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": `${file.type}; charset=utf-8`, "cache-control": "no-store" });
    res.end(typeof file.body === "function" ? file.body() : file.body);
  });
}
