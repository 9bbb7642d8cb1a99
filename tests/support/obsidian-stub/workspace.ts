// Stand-ins for Obsidian's Component, View/ItemView, WorkspaceLeaf, MarkdownRenderer, setIcon,
// MarkdownView and Menu: the parts the chat view uses. Behaviour follows Obsidian's documented
// semantics (children unload with their parent, register* callbacks run on unload, ItemView's
// containerEl holds a header and a ".view-content" contentEl). App, Workspace, Plugin, etc. live in app.ts.
import "./dom";

type EventRefLike = { off?: () => void; e?: { offref(ref: unknown): void } };

export class Component {
  _loaded = false;
  private _children: Component[] = [];
  private _cleanups: (() => unknown)[] = [];

  load(): void {
    if (this._loaded) return;
    this._loaded = true;
    this.onload();
    for (const child of this._children) child.load();
  }
  onload(): void {}
  unload(): void {
    if (!this._loaded) return;
    this._loaded = false;
    for (const child of this._children.splice(0)) child.unload();
    for (const fn of this._cleanups.splice(0).reverse()) fn();
    this.onunload();
  }
  onunload(): void {}
  addChild<T extends Component>(component: T): T {
    this._children.push(component);
    if (this._loaded) component.load();
    return component;
  }
  removeChild<T extends Component>(component: T): T {
    const i = this._children.indexOf(component);
    if (i >= 0) {
      this._children.splice(i, 1);
      component.unload();
    }
    return component;
  }
  register(cb: () => unknown): void {
    this._cleanups.push(cb);
  }
  registerEvent(ref: EventRefLike): void {
    this.register(() => {
      if (ref.off) ref.off();
      else ref.e?.offref(ref);
    });
  }
  registerDomEvent(
    el: EventTarget,
    type: string,
    callback: (ev: Event) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void {
    el.addEventListener(type, callback as EventListener, options);
    this.register(() => el.removeEventListener(type, callback as EventListener, options));
  }
  registerInterval(id: number): number {
    this.register(() => clearInterval(id));
    return id;
  }
}

export interface ViewStateLike {
  type: string;
  active?: boolean;
  state?: Record<string, unknown>;
}

export type ViewCreator = (leaf: WorkspaceLeaf) => View;

/** A pane. `viewCreators` plays the part of Obsidian's view registry (the stand-in App passes its own). */
export class WorkspaceLeaf extends Component {
  view: View | null = null;
  readonly containerEl: HTMLElement;

  constructor(
    readonly app: unknown = {},
    readonly viewCreators: Map<string, ViewCreator> = new Map(),
  ) {
    super();
    this.containerEl = document.createElement("div");
    this.containerEl.addClass("workspace-leaf");
  }

  async open(view: View): Promise<View> {
    if (this.view) await this.detachView();
    this.view = view;
    this.containerEl.appendChild(view.containerEl);
    view.load();
    await view.onOpenInternal();
    return view;
  }

  async setViewState(state: ViewStateLike): Promise<void> {
    const create = this.viewCreators.get(state.type);
    if (!create) throw new Error(`No view registered for type "${state.type}"`);
    const view = await this.open(create(this));
    if (state.state) await view.setState(state.state, { history: false });
  }

  /** What Obsidian saves in the workspace layout (and hands back to setViewState after a restart). */
  getViewState(): ViewStateLike {
    return { type: this.view?.getViewType() ?? "empty", state: this.view?.getState() ?? {} };
  }

  private async detachView(): Promise<void> {
    const view = this.view;
    if (!view) return;
    this.view = null;
    await view.onCloseInternal();
    view.unload();
    view.containerEl.remove();
  }

  async detach(): Promise<void> {
    await this.detachView();
    this.containerEl.remove();
  }
}

export abstract class View extends Component {
  app: unknown;
  icon = "";
  navigation = false;
  readonly containerEl: HTMLElement;

  constructor(readonly leaf: WorkspaceLeaf) {
    super();
    this.app = leaf.app;
    this.containerEl = document.createElement("div");
    this.containerEl.addClass("view-container");
  }

  abstract getViewType(): string;
  abstract getDisplayText(): string;
  getIcon(): string {
    return this.icon;
  }
  getState(): Record<string, unknown> {
    return {};
  }
  async setState(_state: unknown, _result: { history: boolean }): Promise<void> {}
  protected async onOpen(): Promise<void> {}
  protected async onClose(): Promise<void> {}
  /** The stand-in leaf calls these; Obsidian calls onOpen/onClose the same way. */
  async onOpenInternal(): Promise<void> {
    await this.onOpen();
  }
  async onCloseInternal(): Promise<void> {
    await this.onClose();
  }
}

export abstract class ItemView extends View {
  readonly contentEl: HTMLElement;
  private readonly actionsEl: HTMLElement;

  constructor(leaf: WorkspaceLeaf) {
    super(leaf);
    const header = this.containerEl.createDiv({ cls: "view-header" });
    this.actionsEl = header.createDiv({ cls: "view-actions" });
    this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
  }

  addAction(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
    const el = this.actionsEl.createEl("button", { cls: "clickable-icon view-action", attr: { "aria-label": title } });
    setIcon(el, icon);
    el.addEventListener("click", (ev) => callback(ev));
    return el;
  }
}

/** Obsidian draws Lucide icons; the stand-in leaves an svg that names the icon (tests can find it). */
export function setIcon(parent: HTMLElement, iconId: string): void {
  parent.empty();
  const svg = parent.createSvg("svg", {
    cls: ["svg-icon", `lucide-${iconId}`],
    attr: { "data-icon": iconId, viewBox: "0 0 24 24", width: 16, height: 16, "aria-hidden": "true" },
  });
  iconPainter?.(svg, iconId);
}

let iconPainter: ((svg: SVGElement, iconId: string) => void) | undefined;
/** The browser-test page draws simple shapes into icons so screenshots are readable. */
export function setIconPainter(painter: ((svg: SVGElement, iconId: string) => void) | undefined): void {
  iconPainter = painter;
}

/** A view of one file. Obsidian opens a PDF, an image or a canvas in one of these, never in a MarkdownView. */
export class FileView extends ItemView {
  file: { path: string; basename: string; extension?: string } | null = null;
  getViewType(): string {
    return this.file?.extension ?? "file";
  }
  getDisplayText(): string {
    return this.file?.basename ?? "";
  }
}

/** As in Obsidian, a MarkdownView is a FileView (MarkdownView → TextFileView → FileView). */
export class MarkdownView extends FileView {
  editor: { replaceSelection(text: string): void; getValue(): string } | null = null;
  getViewType(): string {
    return "markdown";
  }
}

export class MenuItem {
  title = "";
  icon = "";
  callback: ((evt: MouseEvent | KeyboardEvent) => unknown) | null = null;
  setTitle(title: string): this {
    this.title = title;
    return this;
  }
  setIcon(icon: string): this {
    this.icon = icon;
    return this;
  }
  onClick(cb: (evt: MouseEvent | KeyboardEvent) => unknown): this {
    this.callback = cb;
    return this;
  }
}

/** Records its items; tests pick one with `menu.items`. The last shown menu is `Menu.lastShown`. */
export class Menu {
  static lastShown: Menu | null = null;
  readonly items: MenuItem[] = [];
  addItem(cb: (item: MenuItem) => unknown): this {
    const item = new MenuItem();
    cb(item);
    this.items.push(item);
    return this;
  }
  addSeparator(): this {
    return this;
  }
  showAtMouseEvent(_evt: MouseEvent): this {
    Menu.lastShown = this;
    return this;
  }
  showAtPosition(_pos: { x: number; y: number }): this {
    Menu.lastShown = this;
    return this;
  }
  hide(): this {
    if (Menu.lastShown === this) Menu.lastShown = null;
    return this;
  }
}

/** A component tied to an element rendered in a note (it unloads with the note's section). */
export class MarkdownRenderChild extends Component {
  constructor(readonly containerEl: HTMLElement) {
    super();
  }
}

/**
 * A small, honest Markdown renderer: headings, paragraphs, fenced code, lists, blockquotes/callouts,
 * emphasis, inline code, links and [[wikilinks]] (as Obsidian's "internal-link" anchors). Enough for
 * tests to see structure; not a full CommonMark implementation.
 */
export class MarkdownRenderer {
  static async render(_app: unknown, markdown: string, el: HTMLElement, sourcePath: string, _component: Component): Promise<void> {
    renderBlocks(markdown, el, sourcePath);
    await Promise.resolve();
  }
  static async renderMarkdown(markdown: string, el: HTMLElement, sourcePath: string, component: Component): Promise<void> {
    return MarkdownRenderer.render(null, markdown, el, sourcePath, component);
  }
}

function renderBlocks(markdown: string, el: HTMLElement, sourcePath: string): void {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = /^\s*(```|~~~)\s*([\w-]*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++; // closing fence (or end of text while streaming)
      const pre = el.createEl("pre");
      const code = pre.createEl("code", { text: body.join("\n") });
      if (fence[2]) code.addClass(`language-${fence[2]}`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      renderInline(heading[2], el.createEl(`h${heading[1].length}` as "h1"), sourcePath);
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ""));
      const callout = /^\[!(\w+)\]\s*(.*)$/.exec(body[0] ?? "");
      if (callout) {
        const box = el.createDiv({ cls: "callout", attr: { "data-callout": callout[1].toLowerCase() } });
        renderInline(callout[2] || callout[1], box.createDiv({ cls: "callout-title" }), sourcePath);
        renderBlocks(body.slice(1).join("\n"), box.createDiv({ cls: "callout-content" }), sourcePath);
      } else {
        renderBlocks(body.join("\n"), el.createEl("blockquote"), sourcePath);
      }
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+(.*)$/;
    if (listItem.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el.createEl(ordered ? "ol" : "ul");
      while (i < lines.length && listItem.test(lines[i])) {
        const m = listItem.exec(lines[i]);
        renderInline(m ? m[2] : "", list.createEl("li"), sourcePath);
        i++;
      }
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() !== "" && !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])) {
      para.push(lines[i++]);
    }
    if (para.length === 0) para.push(lines[i++]);
    const p = el.createEl("p");
    para.forEach((text, n) => {
      if (n > 0) p.createEl("br");
      renderInline(text, p, sourcePath);
    });
  }
}

const INLINE = /(`[^`]+`)|(\[\[[^\]]+\]\])|(\[[^\]]+\]\([^)]+\))|(\*\*[^*]+\*\*)|(\*[^*]+\*|_[^_]+_)/;

function renderInline(text: string, el: HTMLElement, sourcePath: string): void {
  let rest = text;
  while (rest.length > 0) {
    const m = INLINE.exec(rest);
    if (!m) {
      el.appendText(rest);
      return;
    }
    if (m.index > 0) el.appendText(rest.slice(0, m.index));
    const token = m[0];
    if (m[1]) el.createEl("code", { text: token.slice(1, -1) });
    else if (m[2]) {
      const inner = token.slice(2, -2);
      const [target, alias] = inner.split("|");
      el.createEl("a", {
        cls: "internal-link",
        text: alias ?? target,
        href: target,
        attr: { "data-href": target, "data-source-path": sourcePath, target: "_blank", rel: "noopener nofollow" },
      });
    } else if (m[3]) {
      const lm = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(token);
      const href = lm ? lm[2] : "";
      const external = /^[a-z]+:\/\//i.test(href);
      el.createEl("a", {
        cls: external ? "external-link" : "internal-link",
        text: lm ? lm[1] : token,
        href,
        attr: external ? { target: "_blank", rel: "noopener nofollow" } : { "data-href": href },
      });
    } else if (m[4]) renderInline(token.slice(2, -2), el.createEl("strong"), sourcePath);
    else renderInline(token.slice(1, -1), el.createEl("em"), sourcePath);
    rest = rest.slice(m.index + token.length);
  }
}
