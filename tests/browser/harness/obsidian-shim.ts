// What `obsidian` resolves to inside the browser-test page: the DOM helpers and workspace stand-ins
// (app.ts is Node-backed and not needed by the chat view), plus the Platform flags the view reads.
export * from "../../support/obsidian-stub/dom";
export * from "../../support/obsidian-stub/workspace";

/** A desktop browser; the harness passes `mobile` to the view itself when a test plays a phone. */
export const Platform = { isDesktop: true, isMobile: false, isDesktopApp: true, isMobileApp: false, isPhone: false, isTablet: false };
