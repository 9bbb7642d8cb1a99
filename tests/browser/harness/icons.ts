// Simple line drawings for the icons the chat view uses, so the page's screenshots are readable
// (Obsidian draws Lucide icons; the stand-in setIcon only leaves an empty, named svg).
const SHAPES: Record<string, string[]> = {
  send: ["M4 12 L20 4 L14 20 L11 13 Z", "M11 13 L20 4"],
  square: ["M6 6 H18 V18 H6 Z"],
  "square-pen": ["M4 6 H12", "M4 6 V20 H18 V12", "M10 14 L19 5 L21 7 L12 16 H10 Z"],
  history: ["M4 12 A8 8 0 1 0 7 6", "M4 4 V8 H8", "M12 8 V12 L15 14"],
  copy: ["M8 8 H20 V20 H8 Z", "M4 16 V4 H16"],
  "text-cursor-input": ["M12 4 V20", "M9 4 H15", "M9 20 H15", "M4 9 V15", "M20 9 V15"],
  "file-plus": ["M6 3 H14 L19 8 V21 H6 Z", "M14 3 V8 H19", "M12.5 11 V18", "M9 14.5 H16"],
  "refresh-cw": ["M20 11 A8 8 0 0 0 6 6 L4 8", "M4 3 V8 H9", "M4 13 A8 8 0 0 0 18 18 L20 16", "M20 21 V16 H15"],
  pencil: ["M4 20 L5 15 L16 4 L20 8 L9 19 Z"],
  "trash-2": ["M4 6 H20", "M9 6 V4 H15 V6", "M6 6 L7 20 H17 L18 6"],
  info: ["M12 3 A9 9 0 1 0 12.01 3", "M12 11 V16", "M12 8 V8.5"],
  "arrow-down": ["M12 4 V20", "M6 14 L12 20 L18 14"],
  "messages-square": ["M4 4 H16 V13 H9 L5 16 V13 H4 Z", "M18 8 H20 V17 H19 V20 L15 17 H10 V15"],
  "bot-off": ["M5 8 H19 V19 H5 Z", "M12 4 V8", "M9 13 V14", "M15 13 V14", "M3 3 L21 21"],
};

export function paintIcon(svg: SVGElement, iconId: string): void {
  for (const d of SHAPES[iconId] ?? ["M5 5 H19 V19 H5 Z"]) {
    const path = svg.ownerDocument.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
}
