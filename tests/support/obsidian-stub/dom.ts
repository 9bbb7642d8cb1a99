// Obsidian's DOM helpers (createEl, createDiv, empty, setText, addClass, ...) for jsdom and for the
// browser-test page. Obsidian installs these on the DOM prototypes at start-up; this file does the same
// with the same option shape ({ cls, text, attr, title, type, placeholder, value, href, parent, prepend }),
// so view code runs unchanged. Importing this module installs them when a DOM exists (no-op in Node).

export interface DomElementInfo {
  cls?: string | string[];
  text?: string | DocumentFragment;
  attr?: Record<string, string | number | boolean | null>;
  title?: string;
  parent?: Node;
  value?: string;
  type?: string;
  prepend?: boolean;
  placeholder?: string;
  href?: string;
}

type Info = DomElementInfo | string | undefined;

function classesOf(cls: string | string[] | undefined): string[] {
  if (!cls) return [];
  return (Array.isArray(cls) ? cls : cls.split(" ")).filter((c) => c.length > 0);
}

function applyInfo(el: HTMLElement | SVGElement, info: Info): void {
  if (info === undefined) return;
  const o: DomElementInfo = typeof info === "string" ? { cls: info } : info;
  for (const c of classesOf(o.cls)) el.classList.add(c);
  if (o.text !== undefined) {
    if (typeof o.text === "string") el.textContent = o.text;
    else el.appendChild(o.text);
  }
  if (o.attr) setAttrs(el, o.attr);
  if (o.title !== undefined) el.setAttribute("title", o.title);
  const anyEl = el as unknown as Record<string, unknown>;
  if (o.value !== undefined && "value" in el) anyEl.value = o.value;
  if (o.type !== undefined) el.setAttribute("type", o.type);
  if (o.placeholder !== undefined) el.setAttribute("placeholder", o.placeholder);
  if (o.href !== undefined) el.setAttribute("href", o.href);
}

function setAttrs(el: Element, attrs: Record<string, string | number | boolean | null>): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === false) el.removeAttribute(k);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function place(parent: Node, child: Node, info: Info): void {
  const o = typeof info === "object" ? info : undefined;
  const target = o?.parent ?? parent;
  if (o?.prepend) target.insertBefore(child, target.firstChild);
  else target.appendChild(child);
}

/** Installs the helpers on a window's prototypes and globals. Safe to call more than once. */
export function installDomHelpers(win: Window & typeof globalThis = globalThis as Window & typeof globalThis): void {
  if (typeof win.Node === "undefined" || typeof win.HTMLElement === "undefined") return;
  const doc = win.document;
  const nodeProto = win.Node.prototype as unknown as Record<string, unknown>;
  if (nodeProto.__kryptonDomHelpers) return;

  const define = (proto: object, name: string, value: unknown) =>
    Object.defineProperty(proto, name, { value, configurable: true, writable: true });

  function createEl(this: Node, tag: string, info?: Info, callback?: (el: HTMLElement) => void): HTMLElement {
    const el = (this.ownerDocument ?? doc).createElement(tag);
    applyInfo(el, info);
    place(this, el, info);
    callback?.(el);
    return el;
  }
  function createSvg(this: Node, tag: string, info?: Info, callback?: (el: SVGElement) => void): SVGElement {
    const el = (this.ownerDocument ?? doc).createElementNS("http://www.w3.org/2000/svg", tag);
    applyInfo(el, info);
    place(this, el, info);
    callback?.(el);
    return el;
  }

  define(nodeProto, "__kryptonDomHelpers", true);
  define(nodeProto, "createEl", createEl);
  define(nodeProto, "createDiv", function (this: Node, info?: Info, cb?: (el: HTMLElement) => void) {
    return createEl.call(this, "div", info, cb);
  });
  define(nodeProto, "createSpan", function (this: Node, info?: Info, cb?: (el: HTMLElement) => void) {
    return createEl.call(this, "span", info, cb);
  });
  define(nodeProto, "createSvg", createSvg);
  define(nodeProto, "empty", function (this: Node) {
    while (this.firstChild) this.removeChild(this.firstChild);
  });
  define(nodeProto, "detach", function (this: Node) {
    this.parentNode?.removeChild(this);
  });
  define(nodeProto, "setText", function (this: Node, text: string | DocumentFragment) {
    if (typeof text === "string") this.textContent = text;
    else {
      while (this.firstChild) this.removeChild(this.firstChild);
      this.appendChild(text);
    }
  });
  define(nodeProto, "appendText", function (this: Node, text: string) {
    this.appendChild((this.ownerDocument ?? doc).createTextNode(text));
  });
  define(nodeProto, "instanceOf", function (this: Node, type: new () => unknown) {
    return this instanceof type;
  });
  Object.defineProperty(nodeProto, "doc", {
    configurable: true,
    get(this: Node) {
      return this.ownerDocument ?? doc;
    },
  });
  Object.defineProperty(nodeProto, "win", {
    configurable: true,
    get(this: Node) {
      return (this.ownerDocument ?? doc).defaultView ?? win;
    },
  });

  const elProto = win.Element.prototype as unknown as Record<string, unknown>;
  define(elProto, "addClass", function (this: Element, ...cls: string[]) {
    for (const c of cls.flatMap((x) => classesOf(x))) this.classList.add(c);
  });
  define(elProto, "addClasses", function (this: Element, cls: string[]) {
    for (const c of cls) this.classList.add(c);
  });
  define(elProto, "removeClass", function (this: Element, ...cls: string[]) {
    for (const c of cls.flatMap((x) => classesOf(x))) this.classList.remove(c);
  });
  define(elProto, "removeClasses", function (this: Element, cls: string[]) {
    for (const c of cls) this.classList.remove(c);
  });
  define(elProto, "toggleClass", function (this: Element, cls: string | string[], value: boolean) {
    for (const c of classesOf(cls)) this.classList.toggle(c, value);
  });
  define(elProto, "hasClass", function (this: Element, cls: string) {
    return this.classList.contains(cls);
  });
  define(elProto, "setAttr", function (this: Element, name: string, value: string | number | boolean | null) {
    setAttrs(this, { [name]: value });
  });
  define(elProto, "setAttrs", function (this: Element, attrs: Record<string, string | number | boolean | null>) {
    setAttrs(this, attrs);
  });
  define(elProto, "getAttr", function (this: Element, name: string) {
    return this.getAttribute(name);
  });
  define(elProto, "find", function (this: Element, selector: string) {
    return this.querySelector(selector);
  });
  define(elProto, "findAll", function (this: Element, selector: string) {
    return Array.from(this.querySelectorAll(selector));
  });
  define(elProto, "findAllSelf", function (this: Element, selector: string) {
    const all = Array.from(this.querySelectorAll(selector));
    return this.matches(selector) ? [this, ...all] : all;
  });
  define(elProto, "matchParent", function (this: Element, selector: string, lastParent?: Element) {
    let el: Element | null = this;
    while (el && el !== lastParent) {
      if (el.matches(selector)) return el;
      el = el.parentElement;
    }
    return null;
  });

  const htmlProto = win.HTMLElement.prototype as unknown as Record<string, unknown>;
  // Obsidian hides with display:none through a style; the stand-in does the same with the hidden attribute.
  define(htmlProto, "show", function (this: HTMLElement) {
    this.hidden = false;
  });
  define(htmlProto, "hide", function (this: HTMLElement) {
    this.hidden = true;
  });
  define(htmlProto, "toggle", function (this: HTMLElement, show: boolean) {
    this.hidden = !show;
  });
  define(htmlProto, "toggleVisibility", function (this: HTMLElement, show: boolean) {
    this.hidden = !show;
  });
  define(htmlProto, "isShown", function (this: HTMLElement) {
    let el: HTMLElement | null = this;
    while (el) {
      if (el.hidden) return false;
      el = el.parentElement;
    }
    return this.isConnected;
  });
  define(htmlProto, "onClickEvent", function (this: HTMLElement, listener: (ev: MouseEvent) => void) {
    this.addEventListener("click", listener);
    this.addEventListener("auxclick", listener);
  });
  define(htmlProto, "setCssProps", function (this: HTMLElement, props: Record<string, string>) {
    for (const [k, v] of Object.entries(props)) this.style.setProperty(k, v);
  });
  define(htmlProto, "setCssStyles", function (this: HTMLElement, styles: Record<string, string>) {
    Object.assign(this.style, styles);
  });

  const fragProto = win.DocumentFragment.prototype as unknown as Record<string, unknown>;
  define(fragProto, "find", function (this: DocumentFragment, selector: string) {
    return this.querySelector(selector);
  });
  define(fragProto, "findAll", function (this: DocumentFragment, selector: string) {
    return Array.from(this.querySelectorAll(selector));
  });

  const g = win as unknown as Record<string, unknown>;
  const createFree = (tag: string, info?: Info, cb?: (el: HTMLElement) => void) => {
    const el = doc.createElement(tag);
    applyInfo(el, info);
    if (typeof info === "object" && info.parent) place(info.parent, el, info);
    cb?.(el);
    return el;
  };
  g.createEl = createFree;
  g.createDiv = (info?: Info, cb?: (el: HTMLElement) => void) => createFree("div", info, cb);
  g.createSpan = (info?: Info, cb?: (el: HTMLElement) => void) => createFree("span", info, cb);
  g.createFragment = (cb?: (frag: DocumentFragment) => void) => {
    const frag = doc.createDocumentFragment();
    cb?.(frag);
    return frag;
  };
  if (g.activeWindow === undefined) g.activeWindow = win;
  if (g.activeDocument === undefined) g.activeDocument = doc;
}

if (typeof globalThis.HTMLElement !== "undefined") installDomHelpers();
