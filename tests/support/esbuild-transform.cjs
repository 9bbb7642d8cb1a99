// Jest transformer: esbuild turns TypeScript and ESM-only packages into CommonJS, fast.
// Type-checking is `npm run typecheck`'s job, not the test run's.
const { transformSync } = require("esbuild");
const crypto = require("node:crypto");

module.exports = {
  process(source, filename) {
    const loader = filename.endsWith(".ts") ? "ts" : filename.endsWith(".tsx") ? "tsx" : "js";
    const out = transformSync(source, {
      loader,
      format: "cjs",
      target: "node20",
      sourcemap: "inline",
      sourcefile: filename,
      supported: { "dynamic-import": false },
    });
    return { code: out.code };
  },
  getCacheKey(source, filename) {
    return crypto.createHash("sha1").update(source).update(filename).update("v1").digest("hex");
  },
};
