// The npm registry reachable from our build machines lacks some platform builds of optional native
// packages (e.g. @unrs/resolver-binding-darwin-arm64, used by Jest's resolver). `npm install` then leaves
// them out of package-lock.json and `npm ci` refuses the lockfile. This adds lock entries for every
// declared-but-missing optional platform package, with its os/cpu/libc taken from its name, so npm ci
// skips them on platforms they are not for (and installs them where they exist, e.g. a Mac).
// Run after changing dependencies: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const platforms = { android: "android", darwin: "darwin", freebsd: "freebsd", linux: "linux", openharmony: "openharmony", win32: "win32" };
const cpus = ["arm64", "arm", "x64", "ia32", "loong64", "ppc64", "riscv64", "s390x", "wasm32"];

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${dep}`;
    if (lock.packages[target] || lock.packages[`${key}/${target}`]) continue;
    const parts = dep.split("/").pop().split("-");
    const os = parts.find((p) => platforms[p]);
    const cpu = parts.find((p) => cpus.includes(p));
    if (!os || !cpu) continue; // not a platform build: leave it to npm
    const libc = os === "linux" ? (parts.some((p) => p.startsWith("musl")) ? "musl" : "glibc") : undefined;
    lock.packages[target] = {
      version,
      cpu: [cpu],
      dev: entry.dev || undefined,
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
console.log(`complete-lockfile: added ${added} optional platform entries`);
