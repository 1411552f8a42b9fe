import DOMPurify from "dompurify";
import { marked } from "marked";
import { useMemo } from "react";

/**
 * Markdown from a component's author (prop descriptions): rendered by marked,
 * then sanitized by DOMPurify before it reaches the DOM. Links open in a new
 * tab without handing the console's window to the page.
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input", "button", "img"], FORBID_ATTR: ["style"] });
}

let hooked = false;
function addLinkHook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.getAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

export function Markdown({ text, className }: { text: string; className?: string }) {
  addLinkHook();
  const html = useMemo(() => renderMarkdown(text), [text]);
  // Sanitized just above: the one place the console sets HTML.
  return <div className={className ? `markdown ${className}` : "markdown"} dangerouslySetInnerHTML={{ __html: html }} />;
}
