/** One web result as it goes into the prompt and the source list. */
export interface WebSnippet {
  title: string;
  url: string;
  content: string;
}

/** A web search service (Tavily today). Errors are ProviderError; no key ⇒ kind "not-configured". */
export interface WebSearch {
  readonly name: string;
  search(query: string, signal?: AbortSignal): Promise<WebSnippet[]>;
}
