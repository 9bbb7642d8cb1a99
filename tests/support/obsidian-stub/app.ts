export class Plugin { app: unknown; onload(): void {} }
