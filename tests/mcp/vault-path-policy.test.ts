// The pure path rules every host applies to paths from MCP clients and scripts.
import { assertSameVault, toFolderPath, toNotePath, toVaultRelativePath, VaultPathError } from "../../src/core/notes/vault-path-policy";

const rules = { configDir: ".obsidian", vaultRoot: "/home/me/Vault", access: "write" } as const;
/** The same rules for a path read, not written. */
const reading = { ...rules, access: "read" } as const;

describe("vault path policy", () => {
  it.each([
    ["Note.md", "Note.md"],
    ["Folder/Sub/Note.md", "Folder/Sub/Note.md"],
    ["./Folder//Note.md", "Folder/Note.md"],
    ["/home/me/Vault/Folder/Note.md", "Folder/Note.md"],
    ["Café – notes.md", "Café – notes.md"],
    ["日本語/メモ。.md", "日本語/メモ。.md"],
    ["Growth 50%.md", "Growth 50%.md"],
    ["v1.2 release.md", "v1.2 release.md"],
    ["考试：数学.md", "考试：数学.md"], // full-width colon: ordinary CJK punctuation, never ':' on disk
    ["第一章：导论/メモ：一.md", "第一章：导论/メモ：一.md"],
  ])("accepts %j as %j", (input, expected) => {
    expect(toVaultRelativePath(input, rules)).toBe(expected);
  });

  it.each([
    ["../outside.md", "'..'"],
    ["Folder/../../outside.md", "'..'"],
    ["Folder/.../x.md", "dot-only"],
    ["/etc/passwd", "outside the vault"],
    ["/home/me/Vault2/Note.md", "outside the vault"],
    ["/home/me/Vault/../Other/Note.md", "'..'"],
    ["C:/Windows/system.ini", "outside the vault"],
    ["..\\outside.md", "Backslashes"],
    ["Folder\\Note.md", "Backslashes"],
    ["%2e%2e/outside.md", "URL-encoded"],
    ["..%2foutside.md", "URL-encoded"],
    ["%2E%2E%2Foutside.md", "URL-encoded"],
    ["\uff0e\uff0e/outside.md", "look-alike"], // fullwidth full stops
    ["..\uff0foutside.md", "look-alike"], // fullwidth solidus
    ["\u2024\u2024/outside.md", "look-alike"], // one-dot leaders (NFKC '.')
    ["\u2025/outside.md", "look-alike"], // two-dot leader (NFKC '..')
    ["Note.md\ufe55stream", "look-alike"], // small colon (NFKC ':'), unlike the full-width one
    ["..\u2215outside.md", "looks like a slash"], // division slash
    ["..\u2044outside.md", "looks like a slash"], // fraction slash
    ["Note.md\u0000.txt", "control characters"],
    ["Note\n.md", "control characters"],
    ["\u202eNote.md", "invisible"], // right-to-left override
    ["No\u200bte.md", "invisible"], // zero-width space
    [".obsidian/app.json", "config folder"],
    [".OBSIDIAN/app.json", "config folder"],
    [".krypton/index/manifest.json", ".krypton"],
    ["/home/me/Vault/.krypton/x.json", ".krypton"],
    [".git/config", "Hidden"],
    ["Folder/.secret.md", "Hidden"],
    ["Note.md:stream", "character notes cannot have"],
    ["CON.md", "Windows reserves"],
    ["nul.txt.md", "Windows reserves"],
    ["Com1 .md", "Windows reserves"],
    ["aux/Note.md", "Windows reserves"],
    ["a".repeat(1025), "longer than 1024"],
    [`Notes/${"漢".repeat(100)}.md`, "longer than file systems allow (255 bytes"], // 303 bytes: ENAMETOOLONG on ext4 and APFS
    [`${"😀".repeat(64)}.md`, "longer than file systems allow"],
    ["", "empty"],
  ])("refuses %j (%s)", (input, problem) => {
    expect(() => toVaultRelativePath(input, rules)).toThrow(VaultPathError);
    expect(() => toVaultRelativePath(input, rules)).toThrow(problem);
  });

  // Windows cannot hold such a file: Krypton never makes one. One that exists (on Linux, macOS) is read like any note.
  it.each(["CON.md", "aux.md", "nul.txt.md", "Com1 .md", "aux/Note.md"])("takes %j, a name Windows reserves, for a read", (input) => {
    expect(toVaultRelativePath(input, reading)).toBe(input);
    expect(toNotePath(input, reading)).toBe(input);
  });

  it("refuses for a read everything else it refuses for a write", () => {
    expect(() => toVaultRelativePath("../outside.md", reading)).toThrow("'..'");
    expect(() => toVaultRelativePath(".krypton/index/manifest.json", reading)).toThrow(".krypton");
  });

  it("measures a name in UTF-8 bytes, as file systems do", () => {
    const name = `${"漢".repeat(84)}.md`; // 255 bytes
    expect(toVaultRelativePath(`Notes/${name}`, rules)).toBe(`Notes/${name}`);
    expect(() => toVaultRelativePath(`Notes/漢${name}`, rules)).toThrow("longer than file systems allow");
  });

  it("refuses absolute paths when the host did not say where the vault is", () => {
    expect(() => toVaultRelativePath("/home/me/Vault/Note.md", { configDir: ".obsidian", access: "read" })).toThrow("Absolute paths are not accepted");
  });

  it("honours a custom config folder", () => {
    expect(() => toVaultRelativePath("_config/app.json", { configDir: "_config", access: "read" })).toThrow("config folder");
  });

  it("accepts Windows vault roots with either slash, case-insensitively, and forward-slash paths inside", () => {
    const win = { configDir: ".obsidian", vaultRoot: "C:\\Users\\Me\\Vault", access: "read" } as const;
    expect(toVaultRelativePath("c:/users/me/vault/Note.md", win)).toBe("Note.md");
    expect(() => toVaultRelativePath("C:/Users/Me/Other/Note.md", win)).toThrow("outside the vault");
  });

  it("toNotePath adds .md, refuses other extensions and the vault itself", () => {
    expect(toNotePath("Projects/Plan", rules)).toBe("Projects/Plan.md");
    expect(toNotePath("Plan.MD", rules)).toBe("Plan.MD");
    expect(() => toNotePath("secret.json", rules)).toThrow("Only markdown notes");
    expect(() => toNotePath("/home/me/Vault", rules)).toThrow("names the vault itself");
  });

  it("toFolderPath treats '' and '/' as the vault root and checks the rest", () => {
    expect(toFolderPath("", rules)).toBe("");
    expect(toFolderPath("/", rules)).toBe("");
    expect(toFolderPath("Inbox/", rules)).toBe("Inbox");
    expect(() => toFolderPath("../x", rules)).toThrow("'..'");
  });
});

describe("vault_path check", () => {
  const location = { root: "/home/me/Vault" };

  it.each(["/home/me/Vault", "/home/me/Vault/", "/home/me/./Vault", "/home/me/other/../Vault"])("accepts %j for the served vault", async (given) => {
    await expect(assertSameVault(given, location)).resolves.toBeUndefined();
  });

  it.each([
    ["/home/me/Other", "does not match the served vault: this server serves /home/me/Vault, not /home/me/Other"],
    ["Vault", "must be an absolute path"],
    ["", "non-empty"],
    ["/home/me/Vault%2f..", "URL-encoded"],
    ["/../..", "not a valid path"],
  ])("refuses %j: %s", async (given, message) => {
    await expect(assertSameVault(given, location)).rejects.toThrow(message);
  });

  it("compares after the host resolves both sides (a symlinked vault folder)", async () => {
    const resolve = async (p: string) => (p === "/links/vault" ? "/home/me/Vault" : p);
    await expect(assertSameVault("/links/vault", { root: "/home/me/Vault", resolve })).resolves.toBeUndefined();
    await expect(assertSameVault("/links/other", { root: "/home/me/Vault", resolve })).rejects.toThrow("does not match");
  });

  it("says so when the server does not know its vault's location", async () => {
    await expect(assertSameVault("/home/me/Vault", undefined)).rejects.toThrow("leave vault_path out");
  });
});
