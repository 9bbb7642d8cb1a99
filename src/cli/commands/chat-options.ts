/** Options shared by `ask` and `chat`. */
export const CHAT_OPTIONS = {
  mode: { type: "string", value: "none|rag|web|hybrid", short: "m", description: "Where context comes from (default: settings, else rag)" },
  note: { type: "string", value: "PATH", description: 'The "current note" for agents ("summarize this note")' },
  conversation: { type: "string", value: "ID", description: "Continue this conversation (.krypton/chat)" },
  folder: { type: "string", value: "DIR", description: "Folder for notes the create agent writes (default Krypton)" },
  "no-agents": { type: "boolean", description: "Always answer with the chat model; no note agents" },
  agent: { type: "boolean", description: "Agent mode: the model uses tools (search, read, list notes, web…) until it can answer" },
  preset: { type: "string", value: "NAME", description: "Agent mode: use this saved preset (persona, provider/model, tools)" },
  "max-steps": { type: "string", value: "N", description: "Agent mode: model steps per answer (default 8)" },
  yes: { type: "boolean", short: "y", description: "Agent mode: allow write tools without asking (required when not on a terminal)" },
} as const;
