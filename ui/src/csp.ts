/**
 * This page's CSP nonce, from <meta name="csp-nonce"> (the server writes a
 * fresh one into index.html on each response): code that must inject <style>
 * elements (CodeMirror) tags them with it.
 */
export function cspNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? "";
}
