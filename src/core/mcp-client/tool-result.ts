import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A remote tool's answer as the model reads it; long answers are cut (small local models have small windows). */
export const REMOTE_RESULT_MAX_CHARS = 20_000;

/**
 * Turns an MCP tool result into text. Text parts are kept; images, audio, embedded resources and resource
 * links are summarised in one line each (the models Krypton drives read text), so a non-text result is
 * never a failure. structuredContent is appended as JSON when the server sent no text at all.
 */
export function resultText(result: CallToolResult, maxChars = REMOTE_RESULT_MAX_CHARS): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        parts.push(item.text);
        break;
      case "image":
        parts.push(`[image: ${item.mimeType}, ${sizeOfBase64(item.data)}; not shown to the model]`);
        break;
      case "audio":
        parts.push(`[audio: ${item.mimeType}, ${sizeOfBase64(item.data)}; not shown to the model]`);
        break;
      case "resource": {
        const r = item.resource;
        if ("text" in r && typeof r.text === "string") parts.push(`[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]\n${r.text}`);
        else parts.push(`[resource ${r.uri}: ${r.mimeType ?? "binary"}, ${sizeOfBase64("blob" in r && typeof r.blob === "string" ? r.blob : "")}; not shown to the model]`);
        break;
      }
      case "resource_link":
        parts.push(`[resource link: ${item.name} ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ""}${item.description ? ` - ${item.description}` : ""}]`);
        break;
      default:
        parts.push(`[${String((item as { type?: unknown }).type)} content; not shown to the model]`);
    }
  }
  const hasText = (result.content ?? []).some((c) => c.type === "text" && c.text.trim() !== "");
  if (!hasText && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n").trim() || (result.isError ? "The tool failed without a message" : "(the tool returned nothing)");
  return text.length > maxChars ? `${text.slice(0, maxChars - 40)}\n… [cut at ${maxChars} characters]` : text;
}

function sizeOfBase64(data: string): string {
  const bytes = Math.floor((data.replace(/=+$/, "").length * 3) / 4);
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}
