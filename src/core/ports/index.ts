export * from "./vault";
export * from "./data-dir";
export * from "./http";
export * from "./clock";
export * from "./logger";
export * from "./embedder";
export * from "./chat-model";
export * from "./host";
