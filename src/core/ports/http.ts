/**
 * HTTP as a fetch-compatible function. In Node it is the global fetch; inside Obsidian it is the page's
 * fetch (streams, cancels) with a fallback to Obsidian's requestUrl when a server refuses CORS.
 * SDK clients (ollama, @google/genai) take this function directly, so every request goes through the host.
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
