import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Debian's chromium (Playwright cannot download browsers here); KRYPTON_CHROMIUM points elsewhere. */
const CHROMIUM = process.env.KRYPTON_CHROMIUM ?? "/usr/bin/chromium";

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** A headless Chromium with a throwaway profile and its first page, for the browser tests. */
export async function launchChromium(options: { viewport?: { width: number; height: number }; deviceScaleFactor?: number } = {}): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The browser tests need Debian's chromium package (apt-get install chromium); ` +
        "CI installs it. Set KRYPTON_CHROMIUM to use another binary.",
    );
  }
  const profileDir = mkdtempSync(join(tmpdir(), "krypton-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      ...options,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    return {
      context,
      page,
      close: async () => {
        await context.close();
        rmSync(profileDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profileDir, { recursive: true, force: true });
    throw err;
  }
}
